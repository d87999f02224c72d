'use strict'
// What both adapter subpaths export besides their own functions: the approval gate, the local
// identity, the content-derived call id and the error class of a tool call.
const { createApprovalGate } = require('./approval-gate.js')
const { localIdentity, isLocalIdentity } = require('./local-identity.js')
const { contentToolCallId, ToolCallError } = require('./harness.js')

module.exports = { createApprovalGate, localIdentity, isLocalIdentity, contentToolCallId, ToolCallError }
