'use strict'
// Subpath `prism-tools-native/providers/transport`, where `@arnilo/prism` keeps its provider transport
// names. The same objects as the main entry.
const errors = require('../lib/errors.js')
const http = require('../lib/providers/http.js')

module.exports = {
  ProviderTransportError: errors.ProviderTransportError,
  httpStatusError: http.httpStatusError,
  parseRetryAfterMs: http.parseRetryAfterMs,
}
