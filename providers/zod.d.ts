// Subpath `prism-tools-native/providers/zod`.
export { zodParameters, zodTool, ZodToolDefinition } from "../types/providers-zod";
