// zod 4 schemas as tool parameters (zod is an optional peer dependency). docs/providers.md
import type * as z from "zod";
import type { JsonObject, ToolDefinition, ToolExecutionContext, ToolResult } from "./harness";

/**
 * The schema as JSON Schema with `io: "input"`: a field with `.default()` is optional. The AI SDK's
 * `jsonSchema(…)` gives its JSON Schema. A field JSON Schema cannot describe (`z.date()`, `z.bigint()`,
 * …) throws `TypeError` `ERR_PRISM_INVALID_TOOL` naming the tool (`options.toolName`), each field and
 * what to use instead.
 */
export declare function zodParameters(schema: z.ZodType | { readonly jsonSchema: unknown }, options?: { toolName?: string }): JsonObject;

export interface ZodToolDefinition<S extends z.ZodType> extends Omit<ToolDefinition<any>, "parameters" | "execute"> {
  schema: S;
  /** Receives the arguments as zod parsed them (defaults applied). */
  execute(args: z.output<S>, ctx: ToolExecutionContext): ToolResult | Promise<ToolResult>;
}

/** A tool whose `parameters` come from `schema` and whose `execute` gets zod-parsed, typed arguments. */
export declare function zodTool<S extends z.ZodType>(definition: ZodToolDefinition<S>): ToolDefinition<JsonObject>;
