// Model providers: OpenAI-compatible Chat Completions and Anthropic Messages streaming, and tool
// definitions in each API's wire format. docs/providers.md
import type { AIProvider, Message, ProviderEvent, ProviderRequest, Usage } from "./agent";
import type { JsonObject, ToolDefinition } from "./harness";

/** An API key, or a function (sync or async) that answers one per request. */
export type CredentialValueSource = string | (() => string | undefined | Promise<string | undefined>);

/** Bounded retries on 429, 408, 409 and 5xx and on network failures. `false` sends once. */
export type ProviderRetryOptions =
  | false
  | {
      /** Attempts in all, the first included. Default 3, at most 10. */
      maxAttempts?: number;
      /** First backoff, doubled per attempt with jitter. Default 500. */
      initialDelayMs?: number;
      /** Cap on any wait, `Retry-After` included. Default 30 000. */
      maxDelayMs?: number;
    };

interface StreamingProviderOptions {
  id?: string;
  apiKey?: CredentialValueSource;
  /** Defaults to the global `fetch`. */
  fetch?: typeof fetch;
  retry?: ProviderRetryOptions;
  /** Headers added to every request (auth and content-type still win). */
  extraHeaders?: (request: ProviderRequest) => Record<string, string>;
  /** Map a non-2xx answer to the error the run reports; `bodyText` is already redacted. */
  mapHttpError?: (response: Response, bodyText: string, secrets: readonly (string | undefined)[]) => Error;
  /** Bound on the streamed body. Default 16 MiB. */
  maxResponseBytes?: number;
  /** Bound on one SSE event's data. Default 256 KiB. */
  maxEventBytes?: number;
  /** Bound on an error body kept in the message. Default 64 KiB. */
  maxErrorBodyBytes?: number;
  /** Bound on one tool call's argument text. */
  maxArgumentBytes?: number;
  /** Bound on each attempt until the response headers arrive (error code `timeout`, retried). Default: none (undici's own). */
  timeoutMs?: number;
}

export interface OpenAICompatibleProviderOptions extends StreamingProviderOptions {
  /** Default `openai-compatible`. */
  id?: string;
  /** E.g. `https://api.openai.com/v1`; requests go to `${baseUrl}/chat/completions`. */
  baseUrl: string;
  /** Overrides the request URL. */
  chatCompletionsUrl?: string | ((request: ProviderRequest) => string);
  /** `bearer` (default): `authorization: Bearer <key>`; `api-key`: `api-key: <key>` (Azure); `none`. */
  authStyle?: "bearer" | "api-key" | "none";
  /** Extra body fields, merged over the base body. */
  buildBodyExtra?: (request: ProviderRequest) => JsonObject | undefined;
  mapMessages?: (request: ProviderRequest) => readonly Message[];
  serializeMessage?: (message: Message, request: ProviderRequest) => JsonObject;
  /** Map the wire `usage` object; default reads prompt/completion/total and cache tokens. */
  mapUsage?: (usage: unknown) => Usage | undefined;
  /** Last transform of the body before it is sent. */
  transformBody?: (body: JsonObject, request: ProviderRequest) => JsonObject;
  /** Require `[DONE]` and a `finish_reason` before `done`. Default true. */
  strictCompletion?: boolean;
  /** Default `OpenAI-compatible request failed`. */
  requestFailedPrefix?: string;
  /** The most tools a request may carry (OpenAI refuses more than 128). Default 128; a request over it fails with `ERR_PRISM_TOOL_CAP`. */
  maxTools?: number;
}

/** Where a prompt-cache breakpoint goes (`@arnilo/prism`'s names): the selected message's last block gets `cache_control`. */
export interface PromptCacheBreakpoint {
  location: "system_prompt" | "tools" | "stable_context" | "last_stable_message" | "last_user_message" | "message_id";
  messageId?: string;
  /** `long` is a 1 h ttl, `short` the API's default (5 min); default: the retention. */
  ttl?: "short" | "long";
}
export interface PromptCacheHints {
  /** `on` sends markers whatever the model declares; `off` never; `auto` (default) when `model.cache.kind` is `cache_control`. */
  mode?: "auto" | "on" | "off";
  retention?: "none" | "short" | "long";
  breakpoints?: readonly PromptCacheBreakpoint[];
}

export interface AnthropicMessagesProviderOptions extends StreamingProviderOptions {
  /** Default `anthropic`. */
  id?: string;
  /** Default `https://api.anthropic.com/v1`; requests go to `${baseUrl}/messages`. Checked at creation. */
  baseUrl?: string;
  userAgent?: string;
  /** Cache hints for every request; the request's `options.cache` fields win. */
  cache?: PromptCacheHints;
  /** `long`: markers carry a 1 h ttl; `none`: no markers. The request's `options.cacheRetention` wins. */
  cacheRetention?: "none" | "short" | "long";
  /**
   * The server-side tool search sent with tools marked `deferLoading`: `"bm25"` (default,
   * `tool_search_tool_bm25_20251119`) or `"regex"`. `false`: no `defer_loading`, and an agent's
   * `search_tools` discloses deferred tools instead.
   */
  toolSearch?: "bm25" | "regex" | false;
}

export declare function createOpenAICompatibleProvider(options: OpenAICompatibleProviderOptions): AIProvider;
export declare function createAnthropicMessagesProvider(options?: AnthropicMessagesProviderOptions): AIProvider;

/** How a provider's SSE stream is read: its abort signal and bounds, and the secrets its error messages are redacted of. */
export interface ProviderStreamReadOptions {
  signal?: AbortSignal;
  /** The whole stream's bound in bytes (`response_body_overflow` past it). */
  maxResponseBytes?: number;
  /** One SSE event's bound in bytes (`sse_event_overflow` past it). */
  maxEventBytes?: number;
  /** One tool call's arguments text bound in bytes. */
  maxArgumentBytes?: number;
  /** Redacted from a stream error's message (e.g. the API key). */
  secrets?: readonly string[];
}
export declare function openAIChatEvents(
  body: ReadableStream<Uint8Array>,
  options?: ProviderStreamReadOptions & { strictCompletion?: boolean; mapUsage?: (usage: unknown) => Usage | undefined },
): AsyncIterable<ProviderEvent>;
export declare function buildOpenAIChatBody(request: ProviderRequest, options?: Pick<OpenAICompatibleProviderOptions, "mapMessages" | "serializeMessage" | "buildBodyExtra" | "transformBody" | "maxTools">): JsonObject;
export declare function anthropicMessagesEvents(body: ReadableStream<Uint8Array>, options?: ProviderStreamReadOptions): AsyncIterable<ProviderEvent>;
export declare function anthropicMessagesBody(request: ProviderRequest, defaults?: Pick<AnthropicMessagesProviderOptions, "cache" | "cacheRetention" | "toolSearch">): JsonObject;
export declare const ANTHROPIC_API_VERSION: string;
export declare const ANTHROPIC_DEFAULT_BASE_URL: string;

/** A Chat Completions `tools[]` entry. */
export interface OpenAIToolDefinition {
  type: "function";
  function: { name: string; description?: string; parameters: JsonObject; strict?: boolean };
}
/** Something strict mode could not keep. `path` is a JSON pointer into the tool's parameters. */
export interface StrictSchemaDrop {
  tool: string;
  path: string;
  keyword: string;
  reason: string;
}
/** The tool fields the wire formats read. */
export type ProviderToolFields = Pick<ToolDefinition<any>, "name" | "description" | "parameters" | "strict" | "inputExamples" | "deferLoading">;
/** `function.strict` for a `strict` tool; `inputExamples` appended to the description (at most 2 KiB). */
export declare function serializeOpenAITool(tool: ProviderToolFields): OpenAIToolDefinition;
export declare function toOpenAITools(tools: readonly ProviderToolFields[], options?: { strict?: false }): OpenAIToolDefinition[];
export declare function toOpenAITools(
  tools: readonly ProviderToolFields[],
  options: { strict: true },
): { tools: OpenAIToolDefinition[]; dropped: StrictSchemaDrop[] };
export declare function serializeOpenAIChatMessage(message: Message, index?: number): JsonObject;
export declare function mapOpenAIChatUsage(usage: unknown): Usage | undefined;

/** One `GET /v1/models` entry. */
export interface AnthropicModelEntry {
  id: string;
  display_name?: string;
  created_at?: string;
  type?: string;
  max_input_tokens?: number;
  max_tokens?: number;
}
export interface ListAnthropicModelsOptions {
  apiKey?: CredentialValueSource;
  fetch?: typeof fetch;
  /** Default `https://api.anthropic.com/v1`. */
  baseUrl?: string;
  signal?: AbortSignal;
  headers?: Record<string, string>;
  /** The models' `provider`, default `anthropic`. */
  provider?: string;
}
/** A Claude model config: `capabilities`, `cache: { kind: "cache_control", longRetention: true }` and `compat.preserveThinking` by default; given fields win. */
export declare function defineAnthropicModel<T extends { model: string; [key: string]: unknown }>(config: T): T & { provider: string; capabilities: JsonObject; cache: JsonObject; compat: JsonObject };
/** One `/models` entry as a model config (limits from `max_input_tokens` / `max_tokens`); an entry without `id` throws. */
export declare function mapAnthropicModel(entry: AnthropicModelEntry, options?: { provider?: string }): { provider: string; model: string; displayName: string; limits?: { contextWindow?: number; maxOutputTokens?: number }; capabilities: JsonObject; cache: JsonObject; compat: JsonObject };
/** `GET ${baseUrl}/models`, every page (at most 50), as model configs. Errors redact the key. */
export declare function listAnthropicModels(options?: ListAnthropicModelsOptions): Promise<ReturnType<typeof mapAnthropicModel>[]>;

/** A Messages API `tools[]` entry. */
export interface AnthropicToolDefinition {
  name: string;
  description?: string;
  input_schema: JsonObject;
  strict?: boolean;
  input_examples?: readonly JsonObject[];
  defer_loading?: boolean;
}
/** Anthropic's server-side tool search, sent after the tools when any is deferred. */
export interface AnthropicToolSearchDefinition {
  type: "tool_search_tool_bm25_20251119" | "tool_search_tool_regex_20251119";
  name: "tool_search_tool_bm25" | "tool_search_tool_regex";
}
/** `strict`, `input_examples` and `defer_loading` from the tools' fields; the tool search last when any is deferred. */
export declare function toAnthropicTools(
  tools: readonly ProviderToolFields[],
  options?: { toolSearch?: "bm25" | "regex" | false },
): (AnthropicToolDefinition | AnthropicToolSearchDefinition)[];
