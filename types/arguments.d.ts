// Provider argument text: tool calls from the JSON text a model streamed. See docs/validation.md.

/** The error on a call whose argument text gave no JSON object. */
export interface ToolArgumentsErrorInfo {
  /** The fields of a `ProviderTransportError` `invalid_json_arguments`, as plain data. */
  name: "ProviderTransportError"
  /**
   * Names the tool and the problem, in `@arnilo/prism`'s words then the detail, e.g.
   * `Invalid tool arguments JSON for tool get_me: EOF while parsing a value at line 1 column 5`,
   * `Tool arguments for tool get_me exceeded 1048576 bytes`,
   * `Tool arguments for tool get_me must be a JSON object, found array`.
   */
  message: string
  code: "invalid_json_arguments"
}

/** A `ToolCallContent` made from provider text. */
export interface ToolCallFromText {
  type: "tool_call"
  id: string
  name: string
  /** The parsed object; `{}` when the text was refused (then `argumentsError` says why). */
  arguments: Record<string, unknown>
  argumentsError?: ToolArgumentsErrorInfo
}

export interface ArgumentsTextOptions {
  /**
   * Largest argument text accepted, in UTF-8 bytes. Default 1 048 576 (1 MiB), cap 67 108 864;
   * anything else throws `RangeError`.
   */
  maxBytes?: number
}

/**
 * One streamed piece of a tool call, grouped into calls by the same rules as the built-in
 * providers' streams: a delta joins the call with its `id`, else the call at its `index` (unless
 * that call has another `id`: then it starts a new call), and a delta with neither continues the
 * previous call. Calls come out ordered by `index` (calls without one keep first-seen order). The
 * call's `id` is the first `id` seen; its `name` is the name pieces joined, where a piece equal to
 * the name so far, or the whole name again, is not appended; its text the `argumentsText`s in order. A group that
 * never got an `id` or a `name` makes `reconstructToolCallDeltas` throw `ProviderTransportError`
 * `incomplete_delta`. Events whose `type` is set to anything but `"tool_call_delta"` are skipped,
 * so a whole provider stream may be passed.
 */
export interface ToolCallDelta {
  type?: "tool_call_delta"
  id?: string
  index?: number
  name?: string
  /** The next piece of the arguments' JSON text (the provider protocol's field). */
  argumentsText?: string
  /** Accepted as `argumentsText` when that is absent. */
  argumentsDelta?: string
}

/**
 * A tool call from provider JSON text. Malformed JSON, a non-object (array, string, number…),
 * non-string text, or text over `maxBytes` give `arguments: {}` and `argumentsError`
 * (`code: "invalid_json_arguments"`) — never a throw (except `RangeError` for a bad option).
 * Empty or all-whitespace text means no arguments: `{}` without error. The call keeps its text
 * privately, so the JSON Schema validator checks that text in one pass in Rust while `arguments`
 * is still the very object parsed here.
 */
export declare function toolCallFromArgumentsText(
  id: string,
  name: string,
  text: string,
  options?: ArgumentsTextOptions,
): ToolCallFromText

/** Rebuilds tool calls from streamed deltas, then parses each like `toolCallFromArgumentsText`. */
export declare function reconstructToolCallDeltas(
  events: Iterable<ToolCallDelta | { type: string }>,
  options?: ArgumentsTextOptions,
): ToolCallFromText[]
