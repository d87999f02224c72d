import { describe, expect, it } from "vitest";
import * as z from "zod";
import { createToolDispatcher, createToolRegistry } from "../index.mjs";
import { zodParameters, zodTool } from "../providers/zod.mjs";

const schema = z.object({ city: z.string(), days: z.number().int().default(3) });

describe("zod parameters", () => {
  it("keeps a defaulted field optional (io: input)", () => {
    expect(zodParameters(schema)).toEqual({
      type: "object",
      properties: { city: { type: "string" }, days: { type: "integer", default: 3, minimum: -9007199254740991, maximum: 9007199254740991 } },
      required: ["city"],
    });
  });

  it("refuses a non-zod value and a non-object schema", () => {
    expect(() => zodParameters({} as any)).toThrow(/zod 4 schema/);
    expect(() => zodParameters(z.string())).toThrow(/object schema/);
  });

  it("a zodTool dispatches a call without the defaulted field and gets the default", async () => {
    const seen: unknown[] = [];
    const tool = zodTool({
      name: "weather",
      schema,
      execute: (args, ctx) => (seen.push(args), { toolCallId: ctx.toolCallId, name: "weather", value: args.days }),
    });
    const registry = createToolRegistry();
    registry.register(tool);
    const dispatcher = createToolDispatcher({ registry });
    const result = await dispatcher.dispatch({ type: "tool_call", id: "c1", name: "weather", arguments: { city: "Oslo" } }, {} as any);
    expect(result.value).toBe(3);
    expect(seen).toEqual([{ city: "Oslo", days: 3 }]);
  });

  it("a zodTool refuses arguments the schema rejects with the issue paths", async () => {
    const tool = zodTool({ name: "w", schema, execute: (_a, ctx) => ({ toolCallId: ctx.toolCallId, name: "w" }) });
    await expect(async () => tool.execute({ city: 5 } as any, { toolCallId: "x" } as any)).rejects.toThrow(/city: /);
  });

  it("takes the AI SDK's jsonSchema(…) objects as they are", async () => {
    const { jsonSchema } = await import("ai");
    const json = { type: "object", properties: { q: { type: "string" } }, required: ["q"] } as const;
    expect(zodParameters(jsonSchema(json) as any)).toEqual(json);
    expect(() => zodParameters(jsonSchema({ type: "string" }) as any)).toThrow(expect.objectContaining({ code: "ERR_PRISM_INVALID_TOOL", message: expect.stringMatching(/must be an object schema, found string: wrap the fields in z\.object/) }));
  });

  it("a field JSON Schema cannot describe (z.date(), z.bigint()) names the tool, every such field and the fix", () => {
    const define = () => zodTool({ name: "book", schema: z.object({ when: z.date(), guests: z.array(z.object({ born: z.date() })), n: z.bigint() }), execute: () => 1 as any });
    expect(define).toThrow(
      expect.objectContaining({
        code: "ERR_PRISM_INVALID_TOOL",
        fields: expect.arrayContaining(["when", "guests[].born", "n"]),
        message: expect.stringMatching(/^Tool book: .*field when is z\.date\(\), which JSON Schema cannot describe: use z\.iso\.datetime\(\)/),
      }),
    );
    expect(() => zodParameters(z.object({ n: z.bigint() }))).toThrow(/^zodParameters: field n is z\.bigint\(\).*use z\.number\(\)\.int\(\) or z\.string\(\)/);
  });
});
