'use strict'
// Subpath `prism-tools-native/opentelemetry`: agent events as OpenTelemetry spans and metrics (see
// docs/observability.md). `@opentelemetry/api` is an optional peer.
module.exports = require('../lib/opentelemetry.js')
