// Validation of tool arguments (docs/spec.md section 6). See docs/validation.md.

/** One problem found in a tool call's arguments. */
export interface ToolArgumentValidationIssue {
  /**
   * A JSON Pointer into the arguments (`""` for the arguments as a whole, `/owner`, `/items/0`).
   * Absent for problems of the schema itself or of the argument text as a whole (too deep, not
   * valid JSON, a cycle).
   */
  path?: string
  /** What was expected and what was found, e.g. `expected integer, found string "7"`. */
  message: string
}

/** What `ToolArgumentValidator.validate` returns: `{ ok: true }`, or `ok: false` with issues. */
export interface ToolArgumentValidationResult {
  ok: boolean
  /** At most `maxErrors` issues when `ok` is false. */
  errors?: ToolArgumentValidationIssue[]
}

/** A schema-agnostic adapter: validates a value against a schema. Never throws for bad input. */
export interface ToolArgumentValidator {
  validate(schema: unknown, value: unknown): ToolArgumentValidationResult
}

/** The part of a `ToolDefinition` a validator reads. */
export interface ValidatedTool {
  name: string
  /** The tool's JSON Schema; a tool without one passes or is refused per `missingSchema`. */
  parameters?: unknown
}

/**
 * A `ToolValidator` as dispatch calls it: `undefined` passes, a string refuses the call (blocked
 * `validation_failed`) with the issues joined as `path: message; …`.
 */
export type ToolArgumentsValidator = (tool: ValidatedTool, args: unknown, ctx?: unknown) => string | undefined

export interface ToolParameterValidatorOptions {
  /**
   * What to do with a tool that has no `parameters`: `"allow"` (default) passes it, `"reject"`
   * refuses it with `Tool <name> has no parameters schema`. Anything else throws `RangeError`.
   */
  missingSchema?: "allow" | "reject"
}

/**
 * Limits of the JSON Schema validator. Each must be a positive safe integer no greater than its
 * hard cap; anything else throws `RangeError` (`<option> must be a positive safe integer no
 * greater than <cap>`) when the validator is created.
 */
export interface JsonSchemaArgumentValidatorOptions {
  /** Issues reported per validation. Default 8, cap 64. */
  maxErrors?: number
  /** Nesting depth of the arguments (`{}` is 1). Default 64, cap 128. */
  maxDepth?: number
  /** Properties of any one object in the arguments. Default 1 000, cap 100 000. */
  maxProperties?: number
  /** Length of any string or property name in the arguments, in UTF-16 units. Default 1 000 000, cap 8 388 608. */
  maxStringLength?: number
  /** Items of any array in the arguments. Default 10 000, cap 100 000. */
  maxArrayLength?: number
  /** Size of the schema as JSON text, in UTF-8 bytes. Default 262 144, cap 1 048 576. */
  maxSchemaBytes?: number
  /** Nesting depth of the schema. Default 64, cap 128. */
  maxSchemaDepth?: number
  /** Names declared under `properties`, `patternProperties`, `$defs`, `definitions`, `dependentSchemas`. Default 10 000, cap 100 000. */
  maxSchemaProperties?: number
  /** `$ref` / `$dynamicRef` / `$recursiveRef` in the schema. Default 128, cap 1 024. */
  maxSchemaRefs?: number
  /** Keywords (object keys other than declared names) in the schema. Default 10 000, cap 100 000. */
  maxSchemaKeywords?: number
  /** Compiled schemas kept in the LRU cache, keyed by schema content. Default 256, cap 1 024. */
  maxCompiledSchemas?: number
}

export interface JsonSchemaToolArgumentValidatorOptions
  extends JsonSchemaArgumentValidatorOptions,
    ToolParameterValidatorOptions {}

/**
 * Wraps any `ToolArgumentValidator` as a `ToolValidator`: reads `tool.parameters`, calls
 * `adapter.validate(parameters, args)`, and joins the issues as `path: message; …`. A synchronous
 * adapter gives a synchronous validator; an adapter returning a promise gives a promise.
 */
export declare function createToolParameterValidator(
  adapter: ToolArgumentValidator,
  options?: ToolParameterValidatorOptions,
): ToolArgumentsValidator

/**
 * The JSON Schema adapter, in Rust: drafts 2020-12 (default), 2019-09, 07 and 06 by `$schema`;
 * each schema is bounded, checked against its meta-schema and compiled once into an LRU keyed by
 * its content; only fragment-local `$ref` (nothing is ever fetched). `validate` never throws for
 * a bad schema or bad arguments: it returns `ok: false` with issues naming the path and the limit.
 * The schema is serialized on every call, so a schema mutated in place is noticed.
 */
export declare function createJsonSchemaArgumentValidator(
  options?: JsonSchemaArgumentValidatorOptions,
): ToolArgumentValidator

/**
 * The JSON Schema adapter as a `ToolValidator`, for `dispatchToolCall({ validate })` or
 * `createAgent({ validator })`. Per tool it remembers the `parameters` object and its cache key,
 * so a warm call serializes only the arguments (or none at all, when they are still the object
 * `toolCallFromArgumentsText` parsed: their provider text is validated directly). Assigning a new
 * `parameters` object is noticed; mutating a registered tool's schema in place is not.
 */
export declare function createJsonSchemaToolArgumentValidator(
  options?: JsonSchemaToolArgumentValidatorOptions,
): ToolArgumentsValidator
