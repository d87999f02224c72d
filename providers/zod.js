'use strict'
// Subpath `prism-tools-native/providers/zod`: zod 4 schemas as tool parameters (zod is an optional peer).
module.exports = require('../lib/providers/zod.js')
