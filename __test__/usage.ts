// Type check: uses every export the way a user would. `tsc -p __test__/tsconfig.json` must pass.
import { nativeVersion } from "../index.js";

const version: string = nativeVersion();
void version;

// Validation and provider argument text.
import {
  createJsonSchemaArgumentValidator,
  createJsonSchemaToolArgumentValidator,
  createToolParameterValidator,
  reconstructToolCallDeltas,
  toolCallFromArgumentsText,
  type JsonSchemaToolArgumentValidatorOptions,
  type ToolArgumentValidationResult,
  type ToolArgumentValidator,
  type ToolArgumentsValidator,
  type ToolCallDelta,
  type ToolCallFromText,
} from "../index.js";
import * as jsonSchemaSubpath from "prism-tools-native/validation/json-schema";

const validationOptions: JsonSchemaToolArgumentValidatorOptions = { maxErrors: 4, maxCompiledSchemas: 512, missingSchema: "reject" };
const toolValidator: ToolArgumentsValidator = createJsonSchemaToolArgumentValidator(validationOptions);
const schemaAdapter: ToolArgumentValidator = createJsonSchemaArgumentValidator({ maxSchemaBytes: 64 * 1024 });
const viaSubpath: ToolArgumentValidator = jsonSchemaSubpath.createJsonSchemaArgumentValidator();
const wrapped: ToolArgumentsValidator = createToolParameterValidator(schemaAdapter, { missingSchema: "allow" });
const result: ToolArgumentValidationResult = viaSubpath.validate({ type: "object" }, {});
const firstIssue: string | undefined = result.errors?.[0]?.path;
const parsed: ToolCallFromText = toolCallFromArgumentsText("call_1", "search", '{"q":"x"}', { maxBytes: 1024 });
const deltas: ToolCallDelta[] = [{ type: "tool_call_delta", index: 0, id: "call_1", name: "search", argumentsDelta: "{}" }];
const rebuilt: ToolCallFromText[] = reconstructToolCallDeltas(deltas);
const refusal: string | undefined =
  toolValidator({ name: "search", parameters: { type: "object" } }, parsed.arguments) ??
  wrapped({ name: "search" }, rebuilt[0]!.arguments) ??
  parsed.argumentsError?.message;
void firstIssue;
void refusal;
