// Subpath `prism-tools-native/opentelemetry` (ES modules): the very objects of the CommonJS entry.
import cjs from './index.js'

export const { createOpenTelemetryInstrumentation, createInMemoryTelemetry, wrapOpenTelemetryApi } = cjs
export default cjs
