'use strict'
// Identity helpers of `@arnilo/prism` over the native identity check (`assertIdentityActive`): limits,
// delegation that may only narrow, propagation across a boundary, ownership and run identity.

const native = require('../binding.js')
const { IdentityError } = require('./effects.js')
const { codedError } = require('./errors.js')

const DEFAULT_IDENTITY_LIMITS = Object.freeze({
  maxScopes: 64,
  maxScopeBytes: 128,
  maxMetadataBytes: 4 * 1024,
  maxCredentialRefBytes: 256,
  maxPrincipalIdBytes: 256,
})
const HARD_IDENTITY_LIMITS = Object.freeze({
  maxScopes: 256,
  maxScopeBytes: 512,
  maxMetadataBytes: 16 * 1024,
  maxCredentialRefBytes: 2 * 1024,
  maxPrincipalIdBytes: 2 * 1024,
})

/** Limits with defaults filled in; each must be a safe integer from 1 to its hard bound. */
function resolveIdentityLimits(input) {
  const out = {}
  for (const name of Object.keys(DEFAULT_IDENTITY_LIMITS)) {
    const value = input?.[name] ?? DEFAULT_IDENTITY_LIMITS[name]
    const hard = HARD_IDENTITY_LIMITS[name]
    if (!Number.isSafeInteger(value) || value < 1 || value > hard) {
      throw codedError(RangeError, `${name} must be a positive safe integer no greater than ${hard}`, 'ERR_PRISM_INVALID_OPTION')
    }
    out[name] = value
  }
  return out
}

const bytes = (text) => Buffer.byteLength(String(text))

function principalWithin(principal, limits) {
  if (principal !== undefined && typeof principal?.id === 'string' && bytes(principal.id) > limits.maxPrincipalIdBytes) {
    throw new IdentityError('Principal id exceeds byte limit', 'principal_too_large')
  }
  if (principal?.displayName !== undefined && bytes(principal.displayName) > limits.maxPrincipalIdBytes) {
    throw new IdentityError('Principal displayName exceeds byte limit', 'display_name_too_large')
  }
}

// The bounds a caller may set tighter than the defaults the native check applies.
function withinLimits(identity, limits) {
  if (bytes(identity.tenantId) > limits.maxPrincipalIdBytes) {
    throw new IdentityError('Identity tenantId exceeds byte limit', 'tenant_too_large')
  }
  for (const p of [identity.principal, identity.sponsor, identity.owner, identity.delegatedFrom]) principalWithin(p, limits)
  if (identity.scopes.length > limits.maxScopes) {
    throw new IdentityError(`Identity exceeds maxScopes (${limits.maxScopes})`, 'too_many_scopes')
  }
  for (const scope of identity.scopes) {
    if (bytes(scope) > limits.maxScopeBytes) throw new IdentityError('Identity scope exceeds byte limit', 'scope_too_large')
  }
  for (const ref of identity.credentialRefs ?? []) {
    if (bytes(ref) > limits.maxCredentialRefBytes) {
      throw new IdentityError('Credential ref exceeds byte limit', 'credential_ref_too_large')
    }
  }
  if (identity.metadata !== undefined && bytes(JSON.stringify(identity.metadata)) > limits.maxMetadataBytes) {
    throw new IdentityError('Identity metadata exceeds byte limit', 'metadata_too_large')
  }
  for (const field of ['accountId', 'userId']) {
    if (identity[field] !== undefined && bytes(identity[field]) > limits.maxPrincipalIdBytes) {
      throw new IdentityError(`Identity ${field} exceeds byte limit`, field === 'accountId' ? 'account_too_large' : 'user_too_large')
    }
  }
}

/** `assertIdentityActive` with `options.limits` (tighter or looser than the defaults, within the hard bounds). */
function assertActive(identity, options) {
  const limits = resolveIdentityLimits(options?.limits)
  native.assertIdentityActive(identity, { now: options?.now, expectedTenantId: options?.expectedTenantId })
  withinLimits(identity, limits)
  return limits
}

/** The ownership scope fields (`tenantId`, and `accountId` / `userId` when set) of an identity. */
function ownershipFromIdentity(identity) {
  const out = { tenantId: identity.tenantId }
  if (identity.accountId !== undefined) out.accountId = identity.accountId
  if (identity.userId !== undefined) out.userId = identity.userId
  return out
}

/** A delegated identity: same tenant and owners, scopes a non-empty subset, expiry never later. */
function narrowIdentity(parent, options) {
  const limits = assertActive(parent, options)
  const scopes = options?.scopes
  if (!Array.isArray(scopes) || scopes.length === 0) throw new IdentityError('Delegated scopes must be non-empty', 'empty_scopes')
  const held = new Set(parent.scopes)
  for (const scope of scopes) {
    if (!held.has(scope)) throw new IdentityError(`Delegation widens scope: ${scope}`, 'scope_widen')
  }
  if (options.expiresAt !== undefined) {
    const childExpiry = Date.parse(options.expiresAt)
    if (!Number.isFinite(childExpiry)) throw new IdentityError('Delegated expiresAt is invalid', 'invalid_expires_at')
    const parentExpiry = parent.expiresAt === undefined ? NaN : Date.parse(parent.expiresAt)
    if (Number.isFinite(parentExpiry) && childExpiry > parentExpiry) {
      throw new IdentityError('Delegation cannot extend expiry', 'expiry_widen')
    }
  }
  const child = { tenantId: parent.tenantId }
  if (parent.accountId !== undefined) child.accountId = parent.accountId
  if (parent.userId !== undefined) child.userId = parent.userId
  child.principal = options.principal ?? parent.principal
  if (parent.sponsor !== undefined) child.sponsor = parent.sponsor
  if (parent.owner !== undefined) child.owner = parent.owner
  child.delegatedFrom = parent.principal
  child.scopes = Object.freeze([...scopes])
  child.credentialRefs = Object.freeze([...(options.credentialRefs ?? parent.credentialRefs ?? [])])
  child.issuedAt = parent.issuedAt
  const expiresAt = options.expiresAt ?? parent.expiresAt
  if (expiresAt !== undefined) child.expiresAt = expiresAt
  if (parent.revokedAt !== undefined) child.revokedAt = parent.revokedAt
  const metadata = options.metadata ?? parent.metadata
  if (metadata !== undefined) child.metadata = metadata
  child.verified = true
  assertActive(child, { limits })
  return child
}

/** A forwarded identity keeps tenant, account and user, stays active, and never widens scopes. */
function assertIdentityPropagation(parent, child, options) {
  assertActive(parent, options)
  assertActive(child, options)
  if (child.tenantId !== parent.tenantId) throw new IdentityError('Propagated identity changed tenant', 'tenant_widen')
  if (parent.accountId !== undefined && child.accountId !== parent.accountId) {
    throw new IdentityError('Propagated identity changed account', 'account_widen')
  }
  if (parent.userId !== undefined && child.userId !== parent.userId) {
    throw new IdentityError('Propagated identity changed user', 'user_widen')
  }
  const held = new Set(parent.scopes)
  for (const scope of child.scopes) {
    if (!held.has(scope)) throw new IdentityError(`Propagated identity widens scope: ${scope}`, 'scope_widen')
  }
}

/** The run's identity (explicit wins over the agent's), checked active and owning `ownership`; or undefined. */
function resolveRunIdentity(runIdentity, agentIdentity, ownership, options) {
  const identity = runIdentity ?? agentIdentity
  if (!identity) return undefined
  assertActive(identity, options)
  native.assertIdentityMatchesOwnership(identity, ownership ?? ownershipFromIdentity(identity))
  return identity
}

/** Telemetry attributes that name an identity without carrying secrets. */
function identityTelemetryAttributes(identity) {
  assertActive(identity)
  const out = {
    'prism.identity.tenant_id': identity.tenantId,
    'prism.identity.principal_kind': String(identity.principal.kind),
    'prism.identity.principal_id': identity.principal.id,
    'prism.identity.scope_count': String(identity.scopes.length),
  }
  if (identity.accountId !== undefined) out['prism.identity.account_id'] = identity.accountId
  if (identity.userId !== undefined) out['prism.identity.user_id'] = identity.userId
  if (identity.sponsor !== undefined) out['prism.identity.sponsor_id'] = identity.sponsor.id
  if (identity.credentialRefs?.length) out['prism.identity.credential_ref_count'] = String(identity.credentialRefs.length)
  return out
}

// The package entry publishes this whole object (index.js): every name here is public API.
module.exports = {
  DEFAULT_IDENTITY_LIMITS,
  HARD_IDENTITY_LIMITS,
  resolveIdentityLimits,
  ownershipFromIdentity,
  narrowIdentity,
  assertIdentityPropagation,
  resolveRunIdentity,
  identityTelemetryAttributes,
}
