// Subpath `prism-tools-native/validation/json-schema`: the JSON Schema adapter.
export {
  createJsonSchemaArgumentValidator,
  createJsonSchemaToolArgumentValidator,
  JsonSchemaArgumentValidatorOptions,
  JsonSchemaToolArgumentValidatorOptions,
  ToolArgumentValidator,
  ToolArgumentValidationResult,
  ToolArgumentValidationIssue,
  ValidatedTool,
  ToolArgumentsValidator,
} from "../types/validation";
