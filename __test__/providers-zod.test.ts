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
});
