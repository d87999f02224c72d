// Subpath `prism-tools-native/providers/transport`.
export { ProviderTransportError, ProviderTransportErrorCode } from "../types/errors";
