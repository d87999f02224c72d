'use strict'
// The dispatch machine's command table (commands, answers, statuses, flags, type indices), written
// once in Rust (crates/node/src/dispatch/codes.rs) and read here at load.
const native = require('../binding.js')

// A copy with fast properties: the object napi builds (80-odd keys) is a dictionary, so each `C.K_…`
// in the command loop was an inline-cache miss.
const C = Object.freeze({ ...native.dispatchCodes() })

module.exports = C
