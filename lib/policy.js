'use strict'
// The policy assertions of `@arnilo/prism`: ask a permission or trust policy and throw its typed error
// on a refusal. A policy that throws or rejects propagates that very error (its message intact).

const { PermissionDeniedError, TrustDeniedError } = require('./errors.js')

/** Resolves when `policy` (absent: allow) allows `request`; else throws `PermissionDeniedError`. */
async function assertPermission(policy, request) {
  const decision = policy == null ? { allowed: true } : await policy.check(request)
  if (decision === null || typeof decision !== 'object' || decision.allowed !== true) {
    throw new PermissionDeniedError(request, decision !== null && typeof decision === 'object' ? decision : {})
  }
}

/** Resolves when `policy` (absent: trust) trusts `request`; else throws `TrustDeniedError`. */
async function assertTrusted(policy, request) {
  const decision = policy == null ? { trusted: true } : await policy.check(request)
  if (decision === null || typeof decision !== 'object' || decision.trusted !== true) {
    throw new TrustDeniedError(request, decision !== null && typeof decision === 'object' ? decision : {})
  }
}

module.exports = { assertPermission, assertTrusted }
