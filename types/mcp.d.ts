// The MCP client bridge (`prism-tools-native/mcp`): the tools of an MCP server as `ToolDefinition`s,
// resources and prompts as separate bounded facades. Names follow `@arnilo/prism-mcp`. See docs/mcp.md.
// Needs the optional peer dependency `@modelcontextprotocol/sdk` (1.30 or later 1.x).

import type { ErrorInfo, JsonObject, ToolDefinition, ToolExecutionContext, ToolResult } from "./harness";
import type { ToolEffectDeclaration } from "./effects";

/** A server spawned as a child process and spoken to over its stdin/stdout. `close()` ends it (SIGTERM, then SIGKILL). */
export interface McpStdioTransport {
  readonly type: "stdio";
  readonly command: string;
  readonly args?: readonly string[];
  /** Added to a minimal inherited environment (HOME, LOGNAME, PATH, SHELL, TERM, USER). */
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string;
  /** The server's stderr: `"inherit"` (default), `"pipe"`, `"ignore"` or `"overlapped"`. */
  readonly stderr?: "inherit" | "pipe" | "ignore" | "overlapped";
  /**
   * Largest single message the server may send, in bytes (default 16 MiB, hard cap 64 MiB). A larger one
   * closes the connection and kills the server: the bridge turns `disconnected`.
   */
  readonly maxMessageBytes?: number;
}

/** One DNS answer, as `dns.lookup` gives it. */
export interface McpHostAddress {
  readonly address: string;
  readonly family: 4 | 6;
}

/** A hostname resolver (upstream's `MediaHostnameResolver`). */
export type McpHostnameResolver = (hostname: string, signal: AbortSignal) => Promise<readonly McpHostAddress[]>;

/** A server reached over Streamable HTTP. */
export interface McpStreamableHttpTransport {
  readonly type: "streamable-http";
  readonly url: string;
  /** Exact origins (scheme, host, port) every request must go to; 1..64 entries. */
  readonly allowedOrigins: readonly string[];
  /**
   * Enable loopback (127.0.0.0/8, localhost, ::1): `http:` or `https:`. Without it a loopback host is refused
   * like every other non-public one (private, link-local such as 169.254.169.254, `*.local`, …):
   * "MCP HTTP URL is not public". Other non-public hosts are refused either way.
   */
  readonly allowLoopbackHttp?: boolean;
  /** Bytes of any one response body (default 16 MiB, hard cap 64 MiB). */
  readonly maxResponseBytes?: number;
  /** Headers (e.g. `Authorization`) and other fetch options for every request. */
  readonly requestInit?: RequestInit;
  readonly sessionId?: string;
  /**
   * Resolves a hostname for a request (default: `dns.lookup` with every answer). Called once per request;
   * every answer must be public (a loopback name with `allowLoopbackHttp`: loopback), else the request is
   * refused ("MCP hostname resolved to a private or non-public address"); the connection goes to the first
   * answer only, so a later DNS answer cannot redirect it. 1..32 answers.
   */
  readonly resolveHostname?: McpHostnameResolver;
  /**
   * The fetch to use instead of the DNS-pinned one (not upstream's); origin, redirect and size checks still
   * apply, but DNS answers are then this fetch's to check.
   */
  readonly fetch?: typeof globalThis.fetch;
  /** OAuth for this server (see `createMcpOAuthTransport`); the transport then carries and refreshes a bearer token. */
  readonly auth?: McpClientAuthOptions;
}

/** The OAuth session's persistence seam; back it with an encrypted or keychain store in production. */
export interface McpClientAuthState {
  loadTokens(): Promise<McpOAuthTokens | undefined>;
  saveTokens(tokens: McpOAuthTokens): Promise<void>;
  loadDiscovery(): Promise<Readonly<Record<string, unknown>> | undefined>;
  saveDiscovery(state: Readonly<Record<string, unknown>>): Promise<void>;
  loadClientInformation(): Promise<Readonly<Record<string, unknown>> | undefined>;
  saveClientInformation(info: Readonly<Record<string, unknown>>): Promise<void>;
  loadCodeVerifier(): Promise<string | undefined>;
  saveCodeVerifier(verifier: string): Promise<void>;
  clear(scope: "all" | "client" | "tokens" | "verifier" | "discovery"): Promise<void>;
}

export interface McpOAuthTokens {
  readonly access_token: string;
  readonly token_type: string;
  readonly expires_in?: number;
  readonly refresh_token?: string;
  readonly scope?: string;
  readonly id_token?: string;
}

/** Static client credentials, or RFC 7591 dynamic registration with the host's metadata. */
export type McpOAuthRegistrationStrategy =
  | { readonly kind: "static"; readonly clientId: string; readonly clientSecret?: string }
  | { readonly kind: "dcr"; readonly clientMetadata: Readonly<Record<string, unknown>> };

/** Each a positive safe integer up to its hard cap (in parentheses). */
export interface McpOAuthLimitsInput {
  /** One discovery/token response body (64 KiB; 256 KiB). */
  readonly discoveryBytes?: number;
  readonly discoveryCacheEntries?: number;
  /** How long discovered metadata is reused (10 min; 1 h). */
  readonly discoveryCacheTtlMs?: number;
  /** A token or client registration record (16 KiB; 64 KiB). */
  readonly tokenRecordBytes?: number;
  /** The PKCE verifier, the discovery state, an authorization code (4 KiB; 16 KiB). */
  readonly stateBytes?: number;
  /** One discovery request (60 s; 5 min). */
  readonly handshakeTimeoutMs?: number;
}

export interface McpClientAuthOptions {
  readonly state: McpClientAuthState;
  readonly strategy: McpOAuthRegistrationStrategy;
  readonly scopes?: readonly string[];
  /** The local callback of the authorization code flow. */
  readonly redirectUri?: string | URL;
  /** Called with the authorization URL (PKCE S256, `state`, `resource`) when the user must approve. */
  readonly onRedirectRequired?: (authorizationUrl: URL) => void | Promise<void>;
  readonly limits?: McpOAuthLimitsInput;
  /** The base fetch of discovery requests (default `globalThis.fetch`). */
  readonly fetch?: typeof globalThis.fetch;
  readonly now?: () => number;
}

export interface McpClientAuth {
  /** The SDK `OAuthClientProvider`. */
  readonly provider: unknown;
  ensureAuthorized(options?: { readonly scope?: string; readonly resourceMetadataUrl?: URL }): Promise<"AUTHORIZED" | "REDIRECT">;
  /** Exchanges the code the callback received (with the stored PKCE verifier) for tokens. */
  finishAuth(authorizationCode: string): Promise<void>;
  /** RFC 7009 revocation at the server's revocation endpoint (when it has one), then the local tokens are cleared. */
  revoke(): Promise<void>;
  getTokens(): Promise<McpOAuthTokens | undefined>;
}

/**
 * Codes: `ERR_PRISM_MCP_OAUTH_DISCOVERY`, `ERR_PRISM_MCP_OAUTH_ORIGIN` (issuer drift), `ERR_PRISM_MCP_OAUTH_AUDIENCE`
 * (a resource of another origin), `ERR_PRISM_MCP_OAUTH_SSRF`, `ERR_PRISM_MCP_OAUTH_STATE`, `ERR_PRISM_MCP_OAUTH_TOKEN_STORE`.
 * Messages never hold a token, verifier or client secret.
 */
export declare class McpOAuthError extends Error {
  constructor(code: string, message: string, options?: { readonly cause?: unknown });
  readonly code: string;
}
export declare function createMcpClientAuth(
  options: McpClientAuthOptions,
  context: { readonly serverUrl: string | URL; readonly fetch: typeof globalThis.fetch; readonly limits?: Required<McpOAuthLimitsInput> },
): McpClientAuth;
/** Allow-listed MCP origins through the bridge's bounded fetch; every other origin as an OAuth discovery request. */
export declare function createMcpOAuthFetch(config: McpStreamableHttpTransport, limits?: Required<McpOAuthLimitsInput>): typeof globalThis.fetch;
/** A Streamable HTTP transport that authorizes with `config.auth`, and its auth handle. */
export declare function createMcpOAuthTransport(config: McpStreamableHttpTransport): { readonly transport: unknown; readonly auth: McpClientAuth };
/** This module's name (upstream's names `@arnilo/prism-mcp`). */
export declare const packageName: "prism-tools-native/mcp";

export type McpTransportConfig = McpStdioTransport | McpStreamableHttpTransport;

export interface McpToolEffectPolicyInput {
  /** The host-configured server id and the remote tool's own name; remote descriptions are excluded. */
  readonly serverId: string;
  readonly remoteName: string;
}

/**
 * Host review of remote tools. A declaration wins over the tool's annotations; `undefined` falls back to
 * them (read-only → `{ kind: "none" }`, anything else → `{ kind: "external_mutation", idempotency: "unsupported" }`).
 */
export type McpToolEffectPolicy = (input: McpToolEffectPolicyInput) => ToolEffectDeclaration | undefined;

/** Formats the registry name of a remote tool: `formatMcpToolName` (default) or `formatProviderSafeMcpToolName`. */
export type McpToolNameFormatter = (prefix: string, remoteName: string) => string;

/** The limits of a bridge; each a positive safe integer up to its hard cap (see `HARD_*`). */
export interface McpClientLimitsInput {
  /** `tools/list` pages (default 20, hard 100). */
  readonly maxListPages?: number;
  /** Tools listed (default 500, hard 5 000). */
  readonly maxTools?: number;
  readonly maxCursorBytes?: number;
  readonly maxToolNameBytes?: number;
  readonly maxToolDescriptionBytes?: number;
  /** Input plus output schema of one tool (default 256 KiB); a larger tool is left out (`rejectedTools`). */
  readonly maxToolSchemaBytes?: number;
  /** All schemas of one listing (default 4 MiB); more fails the listing. */
  readonly maxTotalToolSchemaBytes?: number;
  readonly maxJsonDepth?: number;
  readonly maxJsonProperties?: number;
  /** One tool result as JSON (default 10 000 000, hard 16 MiB); more gives an `ERR_PRISM_MCP_RESULT_LIMIT` error result. */
  readonly maxResultBytes?: number;
  /** One `tools/call` (default 60 s, hard 30 min). */
  readonly callTimeoutMs?: number;
  /** Connecting and one whole `tools/list` pagination (default 60 s). Not in upstream. */
  readonly connectTimeoutMs?: number;
  readonly listCacheTtlMs?: number;
  /**
   * Progress of one call reaches dispatch (an event and a ledger row each) at most once per this many ms;
   * newer notifications replace one still waiting (default 100, hard 60 000). Not in upstream.
   */
  readonly progressIntervalMs?: number;
  /** Progress forwards per call (default 100, hard 10 000); past it only the newest is kept, forwarded when the call returns. Not in upstream. */
  readonly maxProgressUpdates?: number;
}

export interface ResolvedMcpClientLimits extends Required<McpClientLimitsInput> {}

export interface ConnectMcpToolsOptions extends McpClientLimitsInput {
  /** Stable id of the server (`^[A-Za-z0-9][A-Za-z0-9._-]*$`); the default prefix is `mcp:<serverId>:`. */
  readonly serverId: string;
  readonly transport: McpTransportConfig;
  readonly namePrefix?: string;
  /** Registry names of remote tools (default {@link formatMcpToolName}). */
  readonly formatName?: McpToolNameFormatter;
  /** Remote tool names to bridge; empty or missing means all. Applied at every re-listing. */
  readonly allow?: readonly string[];
  /** Remote tool names never bridged; wins over `allow`. */
  readonly deny?: readonly string[];
  readonly effect?: McpToolEffectPolicy;
  /** Read `readOnlyHint` / `destructiveHint` for effects and `exclusive` (default true). */
  readonly annotations?: boolean;
  /** Check arguments against `inputSchema` with the package's validator before sending (default true). */
  readonly validateArguments?: boolean;
  /** Called after a re-listing (a `notifications/tools/list_changed` or `refresh()`) changed the tool set. */
  readonly onToolsChanged?: (tools: readonly McpBridgedTool[], change: { readonly added: readonly string[]; readonly removed: readonly string[] }) => void;
  /**
   * MCP Apps (`io.modelcontextprotocol/ui`): offer the extension, require the server's acknowledgement
   * ("MCP Apps extension was not negotiated" otherwise), keep app-only tools (`_meta.ui.visibility`
   * without `"model"`) out of `tools`, and expose `apps`. Default false.
   */
  readonly mcpApps?: boolean;
  /** Aborts connecting and the first listing. */
  readonly signal?: AbortSignal;
}

export type AttachMcpToolBridgeOptions = Omit<ConnectMcpToolsOptions, "transport">;

/** A bridged tool: a `ToolDefinition` that also says where it comes from. */
export interface McpBridgedTool extends ToolDefinition<JsonObject> {
  readonly effect: ToolEffectDeclaration;
  exclusive?: boolean;
  readonly mcp: Readonly<{ serverId: string; remoteName: string; annotations?: Readonly<Record<string, unknown>> }>;
}

/**
 * A tool the bridge left out, and why: not the MCP tool shape (no `inputSchema`, a `type` other than
 * `"object"`, a name that is not a string, …), a schema over a bound, or refused by the validator.
 */
export interface McpRejectedTool {
  /** The listed name; a non-string name as its text (`"42"`), an entry without one as `#<position>`. */
  readonly remoteName: string;
  readonly reason: string;
}

/** `connected`; `disconnected` once the server closed, died or broke its stream; `closed` after `close()`. */
export type McpBridgeState = "connected" | "disconnected" | "closed";

export interface McpToolBridge {
  /** The bridged tools now; replaced (never mutated) by a re-listing. Throws `McpBridgeClosedError` after `close()`. */
  readonly tools: readonly McpBridgedTool[];
  readonly state: McpBridgeState;
  /** Why the bridge is `disconnected`. */
  readonly error?: string;
  readonly rejectedTools: readonly McpRejectedTool[];
  /** The stdio server's process id while it runs. */
  readonly pid?: number;
  readonly serverId: string;
  /** The SDK client (for requests the bridge does not wrap). */
  readonly client: unknown;
  /** With `mcpApps: true`: app views of every tool, app-only ones included. */
  readonly apps?: McpAppsBridge;
  /** Re-lists now. Rejects with `ERR_PRISM_MCP_DISCONNECTED` once disconnected. */
  refresh(options?: { signal?: AbortSignal }): Promise<void>;
  /** Ends pending calls, closes the client and the transport (a stdio server is killed). Idempotent. */
  close(): Promise<void>;
}

/** MCP Apps UI metadata of a resource, checked (CSP origins, permissions, domain, border). */
export interface McpUiResourceMetadata {
  readonly csp?: Readonly<{
    readonly connectDomains?: readonly string[];
    readonly resourceDomains?: readonly string[];
    readonly frameDomains?: readonly string[];
    readonly baseUriDomains?: readonly string[];
  }>;
  readonly permissions?: Readonly<{ readonly camera?: true; readonly microphone?: true; readonly geolocation?: true; readonly clipboardWrite?: true }>;
  /** Advisory only: the host chooses sandbox origins. */
  readonly domain?: string;
  readonly prefersBorder?: boolean;
}

export interface McpAppTool {
  readonly name: string;
  /** Its registry name (`formatName(namePrefix, name)`). */
  readonly prismName: string;
  readonly description?: string;
  readonly inputSchema: JsonObject;
  /** `ui://…` */
  readonly resourceUri?: string;
  readonly visibility: readonly ("model" | "app")[];
}

export interface McpAppResource {
  readonly uri: string;
  readonly name: string;
  readonly description?: string;
  readonly mimeType: "text/html;profile=mcp-app";
  /** HTML5, at most `maxResultBytes`. */
  readonly html: string;
  readonly ui?: McpUiResourceMetadata;
}

/** `bridge.apps`: errors are `McpBridgeError` with code `ERR_PRISM_MCP_APPS`. */
export interface McpAppsBridge {
  readonly serverId: string;
  readonly negotiated: true;
  /** Every tool, app-only ones included; `McpToolBridge.tools` holds the model-visible ones. */
  readonly tools: readonly McpAppTool[];
  listResources(): Promise<readonly Omit<McpAppResource, "html">[]>;
  /** The UI resource of a listed app tool; throws `MCP App resource is unavailable` for any other URI. */
  readResource(uri: string): Promise<McpAppResource>;
  /** Calls a tool whose visibility includes `"app"`, through the bridge's call path (bounds, untrusted marking). */
  callTool(name: string, args: JsonObject, context: ToolExecutionContext): Promise<ToolResult>;
}

export interface ConnectMcpCapabilitiesOptions extends ConnectMcpToolsOptions {
  /** Bytes of one resources/prompts answer (default 1 MiB, hard 8 MiB). */
  readonly maxCapabilityBytes?: number;
  /** Items of one list (default 500, hard 5 000). */
  readonly maxCapabilityItems?: number;
  /** Pages of one list (default 20, hard 100). */
  readonly maxCapabilityPages?: number;
  /** Offer `roots`: the host's approved `file:` URIs (at most 500, bounded by `maxCapabilityBytes`). */
  readonly roots?: () => readonly McpRoot[] | Promise<readonly McpRoot[]>;
  /** Offer `sampling`: the server's `sampling/createMessage` request and the host's answer, both bounded. */
  readonly sampling?: (request: { readonly params: Readonly<Record<string, unknown>>; readonly signal: AbortSignal }) => Promise<Readonly<Record<string, unknown>>>;
  /**
   * Offer `elicitation` (form and url): the server's `elicitation/create` request, bounded (message ≤ 2 KiB,
   * schema ≤ 16 KiB) before the host sees it. An `accept` must carry `humanInteraction: true` (never sent
   * to the server) and content valid against the requested schema; see `mcpElicitationResultFromDecision`.
   */
  readonly elicitation?: (request: { readonly params: Readonly<Record<string, unknown>>; readonly signal: AbortSignal }) => Promise<PrismMcpElicitationResult>;
}

export interface McpRoot {
  readonly uri: string;
  readonly name?: string;
}

/** What the host answers an elicitation with; `humanInteraction: true` is required to accept. */
export type PrismMcpElicitationResult =
  | { readonly action: "accept"; readonly content?: JsonObject; readonly humanInteraction: true }
  | { readonly action: "decline" | "cancel" };

/** A server's elicitation as a pending decision of the host's decision flow. */
export interface McpElicitationPendingDecision {
  readonly approvalId: string;
  readonly kind: "elicitation";
  readonly scope: { readonly toolName?: string };
  /** The server's message, at most 2 KiB. */
  readonly reason: string;
  /** The requested schema (at most 16 KiB, compiled by the package's validator); `{ type: "object" }` when none. */
  readonly elicitationSchema: JsonObject;
}

export interface McpElicitationDecisionOptions {
  /** The tool whose call raised the elicitation. */
  readonly toolName?: string;
}

/** The host's decision on an elicitation: a run decision with the user's answer. */
export interface McpElicitationRunDecision {
  readonly approvalId: string;
  readonly outcome: "allow_once" | "allow_for_run" | "reject_once" | "reject_for_run";
  readonly reason?: string;
  /** The user's answer (an object, at most 16 KiB). */
  readonly elicitation?: JsonObject;
}

export declare const MAX_MCP_ELICITATION_MESSAGE_BYTES: 2048;
export declare const MAX_MCP_ELICITATION_SCHEMA_BYTES: 16384;
/** Throws `McpBridgeError` (`ERR_PRISM_MCP_ELICITATION`, or `ERR_PRISM_MCP_LIMIT` past a byte limit) for a malformed or oversized request. */
export declare function mcpElicitationDecision(approvalId: string, params: unknown, options?: McpElicitationDecisionOptions): McpElicitationPendingDecision;
/**
 * `reject_*` → `{ action: "decline" }`; `allow_*` → `{ action: "accept", content, humanInteraction: true }`, only with
 * `humanInteraction: true` and a payload within 16 KiB that is valid against `requestedSchema` or `pending.elicitationSchema`
 * when given (`ERR_PRISM_MCP_ELICITATION_INVALID` otherwise).
 */
export declare function mcpElicitationResultFromDecision(
  decision: McpElicitationRunDecision,
  options?: { readonly humanInteraction?: boolean; readonly pending?: McpElicitationPendingDecision; readonly requestedSchema?: JsonObject },
): PrismMcpElicitationResult;
/** The SDK `Client` the bridge connects with, offering what the options ask for (MCP Apps, roots, sampling, elicitation). */
export declare function createMcpCapabilityClient(options: Partial<ConnectMcpCapabilitiesOptions>): unknown;

/** Resources and prompts beside the tools. They are host-facing: never `ToolDefinition`s. */
export interface McpCapabilityBridge extends McpToolBridge {
  readonly serverVersion?: Readonly<{ name: string; version: string }>;
  readonly serverCapabilities: Readonly<Record<string, unknown>>;
  listResources(options?: { signal?: AbortSignal }): Promise<readonly McpResource[]>;
  listResourceTemplates(options?: { signal?: AbortSignal }): Promise<readonly Record<string, unknown>[]>;
  readResource(uri: string, options?: { signal?: AbortSignal }): Promise<{ contents: readonly McpResourceContents[] }>;
  listPrompts(options?: { signal?: AbortSignal }): Promise<readonly McpPrompt[]>;
  getPrompt(name: string, args?: Readonly<Record<string, string>>, options?: { signal?: AbortSignal }): Promise<{ description?: string; messages: readonly McpPromptMessage[] }>;
}

export interface McpResource {
  readonly uri: string;
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly mimeType?: string;
}
export interface McpResourceContents {
  readonly uri: string;
  readonly mimeType?: string;
  readonly text?: string;
  readonly blob?: string;
}
export interface McpPrompt {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly arguments?: readonly { name: string; description?: string; required?: boolean }[];
}
export interface McpPromptMessage {
  readonly role: "user" | "assistant";
  readonly content: Readonly<Record<string, unknown>>;
}

/** A remote tool as `tools/list` gives it. */
export interface McpListedTool {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly inputSchema: JsonObject;
  readonly outputSchema?: JsonObject;
  readonly annotations?: Readonly<Record<string, unknown>>;
}

export declare function connectMcpTools(options: ConnectMcpToolsOptions): Promise<McpToolBridge>;
/** Bridges a host's own connected SDK `Client` (and its transport, closed by `close()`). */
export declare function attachMcpToolBridge(client: unknown, transport: unknown, options: AttachMcpToolBridgeOptions): Promise<McpToolBridge>;
export declare function connectMcpCapabilities(options: ConnectMcpCapabilitiesOptions): Promise<McpCapabilityBridge>;
export declare function attachMcpCapabilities(client: unknown, transport: unknown, options: AttachMcpToolBridgeOptions & Pick<ConnectMcpCapabilitiesOptions, "maxCapabilityBytes" | "maxCapabilityItems" | "maxCapabilityPages">): Promise<McpCapabilityBridge>;

/**
 * Every tool of a connected client, bounded by the limits; one deadline for the whole listing. Tools whose
 * own schema breaks a bound go to `onRejected` (or throw when it is missing).
 */
export declare function listAllMcpTools(
  client: unknown,
  signal?: AbortSignal,
  limits?: McpClientLimitsInput,
  onRejected?: (tool: McpRejectedTool) => void,
): Promise<McpListedTool[]>;

export declare function mapMcpToolsToDefinitions(
  remoteTools: readonly McpListedTool[],
  context: {
    readonly namePrefix: string;
    readonly serverId: string;
    readonly formatName?: McpToolNameFormatter;
    readonly isClosed?: () => boolean;
    readonly callRemoteTool: (remoteName: string, args: JsonObject, ctx: ToolExecutionContext, name: string) => Promise<ToolResult>;
    readonly effectForRemoteTool?: (remote: McpListedTool) => ToolEffectDeclaration;
  },
): McpBridgedTool[];

/** The effect and `exclusive` flag the bridge gives a listed tool. */
export declare function mcpToolEffect(
  tool: McpListedTool,
  options?: { serverId?: string; effect?: McpToolEffectPolicy; annotations?: boolean },
): { effect: ToolEffectDeclaration; exclusive: boolean };

export declare function createMcpTransport(config: McpTransportConfig): unknown;
/**
 * The fetch of every Streamable HTTP request of `config`'s endpoint: allow-listed origin, the endpoint's
 * origin only, public hosts (loopback with `allowLoopbackHttp`), the hostname resolved once per request and
 * the connection pinned to the checked answer, no redirects, the body bounded by `maxResponseBytes`.
 * Errors are `McpBridgeError`s with code `ERR_PRISM_MCP_TRANSPORT`.
 */
export declare function createSecureMcpFetch(config: McpStreamableHttpTransport): typeof globalThis.fetch;

/** Upstream's names: `${prefix}${remoteName}`, e.g. `mcp:fs:read_file`. */
export declare function formatMcpToolName(prefix: string, remoteName: string): string;
/**
 * Names every provider accepts (`^[a-zA-Z0-9_-]{1,64}$`): `mcp:fs:` + `read_file` → `mcp_fs_read_file`;
 * a remote name with other characters or too long keeps a readable part plus `_` and 8 hex digits of its
 * SHA-256, so distinct remote names never share a name.
 */
export declare function formatProviderSafeMcpToolName(prefix: string, remoteName: string): string;
export declare function isProviderSafeToolName(name: unknown): boolean;
export declare function defaultMcpNamePrefix(serverId: string): string;
export declare function assertValidServerId(serverId: string): void;

export declare function mapMcpContentToBlocks(
  content: readonly Record<string, unknown>[] | undefined,
  /** `richContent` (the bridge's): audio kept as `audio` blocks and links as `resource_link` blocks instead of text. */
  options: { maxResultBytes: number; richContent?: boolean },
): {
  content: (
    | { type: "text"; text: string }
    | { type: "image"; mimeType: string; data: string }
    | { type: "audio"; mediaType: string; data: string }
    | import("./harness").ResourceLinkContent
  )[];
  truncated: boolean;
  bytesUsed: number;
};
export declare function summarizeMcpContent(content: readonly Record<string, unknown>[] | undefined, maxBytes?: number): string;
export declare function boundedMcpErrorMessage(error: unknown, maxBytes: number): string;
export declare function mcpCallError(message: string, code?: string): ErrorInfo;
export declare function estimateUtf8Bytes(value: string): number;
export declare function measureBoundedJson(
  value: unknown,
  bounds: { maxBytes: number; maxDepth: number; maxProperties: number; label?: string },
): { bytes: number; properties: number };
export declare function validateMcpLimit(name: string, value: number, hardCap: number): number;
export declare function resolveMcpClientLimits(input?: McpClientLimitsInput): ResolvedMcpClientLimits;

export declare const DEFAULT_CALL_TIMEOUT_MS: 60000;
export declare const DEFAULT_MAX_RESULT_BYTES: 10000000;
export declare const DEFAULT_LIST_CACHE_TTL_MS: 30000;
export declare const DEFAULT_MAX_LIST_PAGES: number;
export declare const HARD_MAX_LIST_PAGES: number;
export declare const DEFAULT_MAX_TOOLS: number;
export declare const HARD_MAX_TOOLS: number;
export declare const DEFAULT_MAX_CURSOR_BYTES: number;
export declare const HARD_MAX_CURSOR_BYTES: number;
export declare const DEFAULT_MAX_TOOL_NAME_BYTES: number;
export declare const HARD_MAX_TOOL_NAME_BYTES: number;
export declare const DEFAULT_MAX_TOOL_DESCRIPTION_BYTES: number;
export declare const HARD_MAX_TOOL_DESCRIPTION_BYTES: number;
export declare const DEFAULT_MAX_TOOL_SCHEMA_BYTES: number;
export declare const HARD_MAX_TOOL_SCHEMA_BYTES: number;
export declare const DEFAULT_MAX_TOTAL_TOOL_SCHEMA_BYTES: number;
export declare const HARD_MAX_TOTAL_TOOL_SCHEMA_BYTES: number;
export declare const DEFAULT_MAX_JSON_DEPTH: number;
export declare const HARD_MAX_JSON_DEPTH: number;
export declare const DEFAULT_MAX_JSON_PROPERTIES: number;
export declare const HARD_MAX_JSON_PROPERTIES: number;
export declare const HARD_MAX_RESULT_BYTES: number;
export declare const HARD_CALL_TIMEOUT_MS: number;
export declare const HARD_LIST_CACHE_TTL_MS: number;
export declare const DEFAULT_MAX_HTTP_RESPONSE_BYTES: number;
export declare const HARD_MAX_HTTP_RESPONSE_BYTES: number;
export declare const DEFAULT_MAX_CAPABILITY_BYTES: number;
export declare const HARD_MAX_CAPABILITY_BYTES: number;
export declare const DEFAULT_MAX_CAPABILITY_ITEMS: number;
export declare const HARD_MAX_CAPABILITY_ITEMS: number;
export declare const DEFAULT_MAX_CAPABILITY_PAGES: number;
export declare const HARD_MAX_CAPABILITY_PAGES: number;
export declare const DEFAULT_PROGRESS_INTERVAL_MS: number;
export declare const HARD_PROGRESS_INTERVAL_MS: number;
export declare const DEFAULT_MAX_PROGRESS_UPDATES: number;
export declare const HARD_MAX_PROGRESS_UPDATES: number;

/** Codes: `ERR_PRISM_MCP_BRIDGE`, `ERR_PRISM_MCP_LIMIT`, `ERR_PRISM_MCP_TRANSPORT`, `ERR_PRISM_MCP_PROTOCOL`, `ERR_PRISM_MCP_INVALID_TOOL`, `ERR_PRISM_MCP_APPS`, `ERR_PRISM_MCP_TIMEOUT`, `ERR_PRISM_MCP_DISCONNECTED`, `ERR_PRISM_MCP_EFFECT`, `ERR_PRISM_MCP_SDK_MISSING`. */
export declare class McpBridgeError extends Error {
  constructor(message: string, options?: { cause?: unknown; code?: string });
  readonly code: string;
}
/** `MCP tool name collision: <name> (remote tool <remote>)`, code `ERR_PRISM_MCP_NAME_COLLISION`. */
export declare class McpToolNameCollisionError extends McpBridgeError {
  constructor(prefixedName: string, remoteName: string);
  readonly prefixedName: string;
  readonly remoteName: string;
}
/** `MCP bridge is closed`, code `ERR_PRISM_MCP_CLOSED`. */
export declare class McpBridgeClosedError extends McpBridgeError {
  constructor();
}
/** `Unsupported MCP capability: <name>`, code `ERR_PRISM_MCP_UNSUPPORTED_CAPABILITY`. */
export declare class McpUnsupportedCapabilityError extends Error {
  constructor(capability: string);
  readonly code: "ERR_PRISM_MCP_UNSUPPORTED_CAPABILITY";
  readonly capability: string;
}

// ----- The served side: createPrismMcpServer, createPrismMcpWebHandler (docs/mcp.md, "Serving a registry") -----

/** The SDK's `AuthInfo` as the served side passes it on (structurally; no SDK import needed). */
export interface McpServerAuthInfo {
  readonly token: string;
  readonly clientId: string;
  readonly scopes: readonly string[];
  readonly expiresAt?: number;
  readonly resource?: URL;
  readonly extra?: Record<string, unknown>;
}

/** What the host's `authorize` is asked: one call, read, or prompt, with the transport's authentication. */
export interface PrismMcpAuthorizationInput {
  readonly kind: "tool" | "command" | "resource" | "prompt";
  readonly name: string;
  readonly arguments: JsonObject;
  /** The SDK's `AuthInfo` (token, clientId, scopes, extra) the transport authenticated, if any. */
  readonly authInfo?: McpServerAuthInfo;
  readonly sessionId?: string;
  readonly signal: AbortSignal;
}

/** `allowed: true` with the caller's ownership and verified identity (checked: active, within the ownership). */
export interface PrismMcpAuthorization {
  readonly allowed: true;
  readonly ownership?: import("./effects").OwnershipScope;
  readonly identity?: import("./effects").AgentIdentity;
  readonly metadata?: Readonly<Record<string, unknown>>;
}

/** `false`, a throw, or anything but `{ allowed: true }` refuses: `ERR_PRISM_MCP_FORBIDDEN: Forbidden`. */
export type PrismMcpAuthorizer = (input: PrismMcpAuthorizationInput) => false | PrismMcpAuthorization | Promise<false | PrismMcpAuthorization>;

export interface PrismMcpCommand {
  readonly name: string;
  readonly description?: string;
  readonly parameters?: JsonObject;
  readonly metadata?: Readonly<Record<string, unknown>>;
  execute(
    args: JsonObject,
    ctx: { sessionId?: string; runId: string; signal: AbortSignal; metadata: Record<string, unknown> },
  ): { content?: unknown; value?: unknown; error?: ErrorInfo; metadata?: Record<string, unknown> } | Promise<{ content?: unknown; value?: unknown; error?: ErrorInfo; metadata?: Record<string, unknown> }>;
}

export interface PrismMcpResource {
  readonly name: string;
  readonly uri: string;
  readonly title?: string;
  readonly description?: string;
  readonly mimeType?: string;
  read(input: { readonly uri: string; readonly authorization: PrismMcpAuthorization; readonly signal: AbortSignal }): unknown | Promise<unknown>;
}

export interface PrismMcpPrompt {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly arguments?: Readonly<Record<string, { readonly description?: string; readonly required?: boolean }>>;
  get(input: { readonly arguments: Readonly<Record<string, string>>; readonly authorization: PrismMcpAuthorization; readonly signal: AbortSignal }): unknown | Promise<unknown>;
}

/** A durable agent run lifecycle: `agent.<id>.status` and `agent.<id>.resume` tools. */
export interface PrismMcpAgentRunExposure {
  readonly lifecycle: {
    status(ref: { runId: string; sessionId?: string }, scope: { ownership: import("./effects").OwnershipScope; signal: AbortSignal; agentId: string }): unknown | Promise<unknown>;
    resume(
      ref: { runId: string; sessionId?: string },
      decision: { decision: "approve" | "deny"; expectedVersion: number },
      scope: { ownership: import("./effects").OwnershipScope; signal: AbortSignal; agentId: string },
    ): unknown | Promise<unknown>;
  };
}

export interface CreatePrismMcpServerOptions {
  /** Server name (default `prism-mcp-server`) and version (default the package's). */
  readonly name?: string;
  readonly version?: string;
  /** The tools served (a registry is built, duplicates refused), or `registry`: not both. */
  readonly tools?: readonly ToolDefinition<any>[];
  /** A registry served as it is at each `tools/list` (not upstream's). */
  readonly registry?: import("./harness").ToolRegistry;
  /** The host's allow/deny: applied to `tools/list` and to every call (not upstream's). */
  readonly filter?: import("./harness").ToolFilterInput;
  readonly commands?: readonly PrismMcpCommand[];
  readonly resources?: readonly PrismMcpResource[];
  readonly prompts?: readonly PrismMcpPrompt[];
  readonly agentRuns?: Readonly<Record<string, PrismMcpAgentRunExposure>>;
  /** Required: every call is authorized; the identity it returns is dispatch's (effect keys, ledger rows). */
  readonly authorize: PrismMcpAuthorizer;
  /** Default: the package's JSON Schema validator over each tool's `parameters`. */
  readonly validate?: import("./harness").ToolValidator;
  readonly permission?: import("./harness").PermissionPolicyLike;
  readonly trust?: import("./harness").TrustPolicyLike;
  readonly guardrails?: import("./harness").GuardrailOptions;
  readonly middleware?: import("./harness").MiddlewareRunner;
  readonly effectStore?: import("./effects").ToolEffectStore;
  readonly ledger?: import("./ledger").RunLedger;
  readonly emit?: (event: import("./harness").AgentEvent) => void | Promise<void>;
  readonly redactor?: import("./harness").SecretRedactor;
  /** Known secret values; a redactor is made from them when `redactor` is not given. */
  readonly secrets?: readonly string[];
  /** Accepted for upstream's code; not applied (see docs/mcp.md). */
  readonly limits?: Readonly<Record<string, unknown>>;
  /** Bytes of one result's text (default 1 MiB, hard 8 MiB). */
  readonly maxResultBytes?: number;
  /** Calls at once (default 16, hard 256); more get `ERR_PRISM_MCP_CONCURRENCY`. */
  readonly maxConcurrentCalls?: number;
  /** One call (default 60 s, hard 30 min); then the call's signal aborts. */
  readonly callTimeoutMs?: number;
}

/** The official SDK's `McpServer`: `connect(transport)`, `close()`, `server`, `sendToolListChanged()`. */
export interface PrismMcpServer {
  connect(transport: unknown): Promise<void>;
  close(): Promise<void>;
  readonly server: unknown;
  sendToolListChanged(): void;
}

/** A principal a stateful session belongs to. */
export interface PrismMcpRequestIdentity {
  readonly id: string;
  readonly ownership?: import("./effects").OwnershipScope;
}

/** RFC 9728 protected-resource metadata. */
export interface McpProtectedResource {
  readonly authorizationServers: readonly string[];
  readonly resource?: string;
  readonly scopesSupported?: readonly string[];
}

export interface CreatePrismMcpWebHandlerOptions {
  readonly resolveAuthInfo?: (request: Request) => McpServerAuthInfo | undefined | Promise<McpServerAuthInfo | undefined>;
  /** Required for stateful sessions; a falsy answer is a 401. */
  readonly resolveIdentity?: (request: Request, authInfo: McpServerAuthInfo | undefined) => PrismMcpRequestIdentity | false | Promise<PrismMcpRequestIdentity | false>;
  readonly protectedResource?: McpProtectedResource;
  /** Set for stateful sessions (with `resolveIdentity` and `allowedOrigins`). */
  readonly sessionIdGenerator?: () => string;
  /** Sessions at once (default 32, hard 512); past it a new session gets 503 `ERR_PRISM_MCP_SESSION_LIMIT`. */
  readonly maxSessions?: number;
  /** A session idle this long may be evicted for a new one (default 15 min, hard 24 h). Not upstream's. */
  readonly sessionIdleMs?: number;
  /**
   * `Host` headers accepted, exactly (port included). Without it, a request that arrives on a loopback
   * address through `createPrismMcpNodeHandler` must name `localhost`, `127.0.0.1` or `[::1]` (any port):
   * anything else is a 403 `Invalid Host header: <host>` (DNS-rebinding protection, as the MCP SDK's).
   */
  readonly allowedHosts?: readonly string[];
  readonly allowedOrigins?: readonly string[];
  /** Default 1 MiB, hard 8 MiB (413). */
  readonly maxRequestBytes?: number;
  /** Default 2 MiB, hard 16 MiB: a JSON body over it is a 507; an event stream is cut. */
  readonly maxResponseBytes?: number;
  /** Default 32, hard 512 (429). */
  readonly maxConcurrentRequests?: number;
  /** Default 60 s, hard 30 min (408). */
  readonly requestTimeoutMs?: number;
  /** JSON answers (default true, upstream's); `false` streams answers as events, so progress reaches the client. */
  readonly enableJsonResponse?: boolean;
}

export interface PrismMcpWebHandler {
  (request: Request): Promise<Response>;
  /** Live sessions (not upstream's). */
  readonly sessionCount: number;
  /** Closes every session the handler opened (not upstream's). */
  close(): Promise<void>;
}

export declare function createPrismMcpServer(options: CreatePrismMcpServerOptions): PrismMcpServer;
export declare function createPrismMcpWebHandler(
  server: PrismMcpServer | (() => PrismMcpServer | Promise<PrismMcpServer>),
  options?: CreatePrismMcpWebHandlerOptions,
): Promise<PrismMcpWebHandler>;
/** A `node:http` request listener over a web handler. */
export declare function createPrismMcpNodeHandler(
  handler: (request: Request) => Promise<Response>,
  options?: { baseUrl?: string },
): (req: import("node:http").IncomingMessage, res: import("node:http").ServerResponse) => Promise<void>;
/**
 * A stateless answer's body relayed chunk by chunk: `onClose` runs exactly once, when the body ends, fails
 * or its reader cancels (the source is cancelled too). A null body closes at once and gives null.
 */
export declare function relayStatelessBody(body: ReadableStream<Uint8Array> | null, onClose: () => void): Response | null;
export declare const DEFAULT_MAX_SESSIONS: 32;
export declare const HARD_MAX_SESSIONS: 512;
