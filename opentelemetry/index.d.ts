// Subpath `prism-tools-native/opentelemetry`: see docs/observability.md.
export * from "../types/opentelemetry";
