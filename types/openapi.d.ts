// `prism-tools-native/openapi`: OpenAPI 3.1 operations as tool definitions. docs/openapi.md
import type { JsonObject, SecretRedactor, ToolDefinition, ToolExecutionContext } from "./harness";

export type OpenApiToolErrorCode =
  | "ERR_PRISM_OPENAPI_DOCUMENT_BOUNDS"
  | "ERR_PRISM_OPENAPI_OPERATION_UNKNOWN"
  | "ERR_PRISM_OPENAPI_SERVER_DRIFT"
  | "ERR_PRISM_OPENAPI_SCHEMA_BOUNDS"
  | "ERR_PRISM_OPENAPI_RESPONSE_BOUNDS"
  | "ERR_PRISM_OPENAPI_RETRY_EXHAUSTED"
  /** This package's: arguments that do not match the operation's schema (a direct `execute` call). */
  | "ERR_PRISM_OPENAPI_ARGUMENTS"
  /** This package's: the server's host, or an address its name resolves to, is not public. */
  | "ERR_PRISM_OPENAPI_ADDRESS";

export declare class OpenApiToolError extends Error {
  readonly code: OpenApiToolErrorCode;
  constructor(code: OpenApiToolErrorCode, message: string, options?: { cause?: unknown });
}

export declare const OPENAPI_ERROR_CODES: readonly OpenApiToolErrorCode[];

export interface OpenApiLimits {
  readonly maxDocumentBytes?: number;
  readonly maxOperations?: number;
  readonly maxSchemaDepth?: number;
  readonly maxRefs?: number;
  readonly maxBodyBytes?: number;
  readonly maxResponseBytes?: number;
  readonly maxPages?: number;
  readonly maxPaginationItems?: number;
  readonly maxRetries?: number;
}

export type ResolvedOpenApiLimits = { readonly [K in keyof OpenApiLimits]-?: number };

export declare const DEFAULT_OPENAPI_LIMITS: ResolvedOpenApiLimits;
export declare const HARD_OPENAPI_LIMITS: ResolvedOpenApiLimits;
/** The limits in force; a value that is not a safe integer, below 1 (0 for `maxRetries`) or above its hard cap throws `ERR_PRISM_OPENAPI_DOCUMENT_BOUNDS`. */
export declare function resolveOpenApiLimits(input?: OpenApiLimits): ResolvedOpenApiLimits;

export interface OpenApiCredentialInput {
  readonly operationId: string;
  readonly method: string;
  readonly path: string;
}

export interface OpenApiCredential {
  readonly headers?: Readonly<Record<string, string>>;
  readonly query?: Readonly<Record<string, string>>;
}

/** Host-owned credentials for a request; never written into the document or the result. */
export type OpenApiCredentialResolver = (
  input: OpenApiCredentialInput,
  context: ToolExecutionContext,
) => OpenApiCredential | undefined | Promise<OpenApiCredential | undefined>;

/** Runs before each request; throw to deny. */
export type OpenApiPolicyCheck = (
  input: OpenApiCredentialInput & { readonly args: JsonObject },
  context: ToolExecutionContext,
) => void | Promise<void>;

/** Cursor pagination, for operations with a query parameter named `pageParam`. */
export interface OpenApiPagination {
  readonly pageParam: string;
  readonly pageSizeParam?: string;
  readonly pageSize?: number;
  /** Dot path of the next-page token; default `next`, then `nextPageToken`. */
  readonly nextPath?: string;
  /** Dot path of the items array; default `items`. */
  readonly itemsPath?: string;
}

export interface OpenApiToolsOptions {
  /** An OpenAPI 3.1 document, as JSON text or a parsed object. */
  readonly document: string | JsonObject;
  /** The operationIds that become tools; no other operation does. */
  readonly operations: readonly string[];
  /** The pinned base URL (https; http only for a loopback host). Every `servers` entry must share its origin. */
  readonly server: string;
  readonly credentials?: OpenApiCredentialResolver;
  readonly policy?: OpenApiPolicyCheck;
  /** Applied to the response text before it is parsed or returned. */
  readonly redactor?: SecretRedactor;
  readonly pagination?: OpenApiPagination;
  /** Send the call's `idempotencyKey` as `Idempotency-Key` on POST, PUT, PATCH and DELETE. */
  readonly idempotencyKeyHeader?: boolean;
  readonly limits?: OpenApiLimits;
  /**
   * The fetch requests go through. Default: this package's secure fetch (every address the host resolves
   * to must be public; the connection goes to the checked address). A host fetch checks addresses itself.
   */
  readonly fetch?: (url: string, init: RequestInit) => Promise<Response>;
  /** Allow a loopback server (`localhost`, `127.0.0.1`, `[::1]`) for the secure fetch. Default false. */
  readonly allowLoopbackHttp?: boolean;
  /** The secure fetch's name resolver (default `dns.lookup` with every answer). */
  readonly resolveHostname?: (hostname: string, signal: AbortSignal) => Promise<readonly { address: string; family: number }[]>;
}

/** Compiles the allow-listed operations into tool definitions, in `operations` order. */
export declare function createOpenApiTools(options: OpenApiToolsOptions): readonly ToolDefinition<JsonObject>[];

export declare const packageName: string;
