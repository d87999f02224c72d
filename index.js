'use strict'
// The package entry (CommonJS). It re-exports the napi-generated loader (`binding.js`) and the few
// small JS pieces the language requires (Error subclasses, the await driver). No decisions live here.
const native = require('./binding.js')
// Middleware, extensions, policies, policy errors
const errors = require('./lib/errors.js')
const middleware = require('./lib/middleware.js')
const extensions = require('./lib/extensions.js')

module.exports = {
  nativeVersion: native.nativeVersion,
  // Middleware, extensions, policies, policy errors
  createMiddlewareRegistry: middleware.createMiddlewareRegistry,
  createExtensionKernel: extensions.createExtensionKernel,
  createExtensionEventBus: extensions.createExtensionEventBus,
  createContributionRegistries: native.createContributionRegistries,
  ContributionRegistry: native.ContributionRegistry,
  createStaticPermissionPolicy: native.createStaticPermissionPolicy,
  createStaticTrustPolicy: native.createStaticTrustPolicy,
  PermissionDeniedError: errors.PermissionDeniedError,
  TrustDeniedError: errors.TrustDeniedError,
  GuardrailError: errors.GuardrailError,
}
