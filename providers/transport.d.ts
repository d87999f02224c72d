// Subpath `prism-tools-native/providers/transport`.
export { ProviderTransportError, ProviderTransportErrorCode } from "../types/errors";
/** An Error with the HTTP status as numeric `code` and `retryAfterMs` from `Retry-After`. */
export declare function httpStatusError(prefix: string, response: Response, bodyText: string): Error & { code: number; retryAfterMs?: number };
/** `Retry-After` (delay-seconds or HTTP-date) in milliseconds. */
export declare function parseRetryAfterMs(value: string | null, now?: number): number | undefined;
