// Subpath `prism-tools-native/openapi`.
export * from "../types/openapi";
