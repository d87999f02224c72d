'use strict'
// The package entry (CommonJS). It re-exports the napi-generated loader (`binding.js`) and the few
// small JS pieces the language requires (Error subclasses, the await driver). No decisions live here.
const native = require('./binding.js')

module.exports = {
  nativeVersion: native.nativeVersion,
}
