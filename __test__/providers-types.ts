// Type test (compiled by `npm run typecheck`): zodTool infers execute's arguments from the schema.
import * as z from "zod";
import { zodTool, zodParameters } from "../providers/zod.js";
import { createOpenAICompatibleProvider } from "../providers/openai-compatible.js";
import { createAnthropicMessagesProvider } from "../providers/anthropic.js";
import { toOpenAITools } from "../providers/openai.js";
import type { AIProvider, ToolDefinition } from "../index.js";

const weather = zodTool({
  name: "weather",
  schema: z.object({ city: z.string(), days: z.number().int().default(3), units: z.enum(["c", "f"]).optional() }),
  execute(args, ctx) {
    const city: string = args.city;
    const days: number = args.days; // defaulted: number, not number | undefined
    const units: "c" | "f" | undefined = args.units;
    // @ts-expect-error: no such field in the schema
    args.country;
    // @ts-expect-error: city is a string
    const wrong: number = args.city;
    void wrong;
    return { toolCallId: ctx.toolCallId, name: "weather", value: { city, days, units } };
  },
});
const asTool: ToolDefinition = weather;
const params: Record<string, unknown> = zodParameters(z.object({ q: z.string() }));

const openai: AIProvider = createOpenAICompatibleProvider({ baseUrl: "https://api.openai.com/v1", apiKey: () => process.env.OPENAI_API_KEY, retry: { maxAttempts: 2 } });
const anthropic: AIProvider = createAnthropicMessagesProvider({ apiKey: "k", retry: false });
// @ts-expect-error: unknown auth style
createOpenAICompatibleProvider({ baseUrl: "x", authStyle: "cookie" });
const strict = toOpenAITools([asTool], { strict: true });
const dropped: string[] = strict.dropped.map((d) => d.keyword);
const plain: { type: "function" }[] = toOpenAITools([asTool]);
void [params, openai, anthropic, dropped, plain];

// strict, inputExamples (typed as the tool's arguments) and deferLoading; the providers' tool options.
const booking: ToolDefinition<{ restaurant: string; guests: number }> = {
  name: "book",
  strict: true,
  inputExamples: [{ restaurant: "Chez Paul", guests: 4 }],
  deferLoading: true,
  execute: (args) => args.guests,
};
// @ts-expect-error: an example has the tool's argument types
const badExample: ToolDefinition<{ guests: number }> = { name: "b", inputExamples: [{ guests: "four" }], execute: () => 0 };
// @ts-expect-error: deferLoading is a boolean
const badDefer: ToolDefinition = { name: "b", deferLoading: "yes", execute: () => 0 };
const capped = createOpenAICompatibleProvider({ baseUrl: "x", maxTools: 64 });
const cap: number | undefined = capped.maxTools;
const searching = createAnthropicMessagesProvider({ toolSearch: "regex" });
const native: boolean | undefined = searching.nativeToolSearch;
// @ts-expect-error: bm25, regex or false
createAnthropicMessagesProvider({ toolSearch: "fuzzy" });
void [booking, badExample, badDefer, cap, native];
