// Seeded properties of provider stream assembly (issue 27): however a server splits, numbers, names
// and repeats the pieces of its tool calls — by index, by id only, every call at index 0, the name
// repeated in every chunk or split in two — the calls come back whole, in order, each once.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { openAIChatEvents } from "../providers/openai-compatible.mjs";
import { anthropicMessagesEvents } from "../providers/anthropic.mjs";
import { budget as propertyBudget } from "./properties/budget.js";

const budget = propertyBudget(300, 4_000);

function body(text: string, pieces: number[]): ReadableStream<Uint8Array> {
  // The SSE text cut at arbitrary byte offsets, as TCP would.
  const bytes = new TextEncoder().encode(text);
  const cuts = [...new Set(pieces.map((p) => Math.floor(p * bytes.length)))].sort((a, b) => a - b);
  return new ReadableStream({
    start(controller) {
      let at = 0;
      for (const cut of [...cuts, bytes.length]) {
        if (cut > at) controller.enqueue(bytes.subarray(at, cut));
        at = Math.max(at, cut);
      }
      controller.close();
    },
  });
}

async function drain(events: AsyncIterable<any>) {
  const out: any[] = [];
  for await (const e of events) out.push(e);
  return out;
}

const call = fc.record({
  name: fc.constantFrom("echo", "get_weather", "read_file", "a"),
  args: fc.dictionary(fc.constantFrom("q", "path", "n", "é"), fc.oneof(fc.string({ maxLength: 12 }), fc.integer(), fc.boolean()), { maxKeys: 3 }),
  splits: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 4 }),
});

function splitText(text: string, splits: number[]): string[] {
  const cuts = [...new Set(splits.map((s) => Math.floor(s * text.length)))].sort((a, b) => a - b);
  const out: string[] = [];
  let at = 0;
  for (const cut of [...cuts, text.length]) {
    if (cut > at) out.push(text.slice(at, cut));
    at = Math.max(at, cut);
  }
  return out.length > 0 ? out : [""];
}

type Style = "indexed" | "id-only" | "all-index-0" | "name-every-chunk" | "name-split";

describe("OpenAI-compatible stream assembly, whatever the server's style", () => {
  it("rebuilds every call, in order, each once", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(call, { minLength: 1, maxLength: 4 }),
        fc.constantFrom<Style>("indexed", "id-only", "all-index-0", "name-every-chunk", "name-split"),
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 6 }),
        async (calls, style, cuts) => {
          const chunks: object[] = [];
          calls.forEach((c, i) => {
            const id = `call_${i}`;
            const pieces = splitText(JSON.stringify(c.args), c.splits);
            const namePieces = style === "name-split" && c.name.length > 1 ? [c.name.slice(0, 1), c.name.slice(1)] : [c.name];
            pieces.forEach((argText, j) => {
              const tc: any = { function: { arguments: argText } };
              if (style === "indexed" || style === "name-every-chunk" || style === "name-split") tc.index = i;
              if (style === "all-index-0") tc.index = 0;
              if (j === 0 || style === "all-index-0") tc.id = id;
              if (style === "name-every-chunk") tc.function.name = c.name;
              else if (j < namePieces.length) tc.function.name = namePieces[j];
              chunks.push({ choices: [{ index: 0, delta: { tool_calls: [tc] }, finish_reason: null }] });
            });
            // A name split in more pieces than the arguments were.
            for (let j = pieces.length; j < namePieces.length; j++) {
              const tc: any = { function: { name: namePieces[j] } };
              if (style !== "id-only") tc.index = i;
              chunks.push({ choices: [{ index: 0, delta: { tool_calls: [tc] }, finish_reason: null }] });
            }
          });
          chunks.push({ choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] });
          const text = chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join("") + "data: [DONE]\n\n";
          const out = await drain(openAIChatEvents(body(text, cuts)));
          const got = out.filter((e) => e.type === "tool_call").map((e) => e.call);
          expect(out.at(-1).type).toBe("done");
          expect(got).toEqual(calls.map((c, i) => ({ type: "tool_call", id: `call_${i}`, name: c.name, arguments: c.args })));
        },
      ),
      budget,
    );
  });
});

describe("Anthropic tool_use assembly, whatever the indexes", () => {
  it("rebuilds every block, in order, each once, from deltas or a whole start input", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(call, fc.boolean()), { minLength: 1, maxLength: 4 }),
        fc.constantFrom("distinct", "same", "none"),
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 6 }),
        async (blocks, indexing, cuts) => {
          const events: object[] = [{ type: "message_start", message: { usage: { input_tokens: 1, output_tokens: 0 } } }];
          blocks.forEach(([c, whole], i) => {
            const at = indexing === "distinct" ? { index: i } : indexing === "same" ? { index: 0 } : {};
            events.push({ type: "content_block_start", ...at, content_block: { type: "tool_use", id: `toolu_${i}`, name: c.name, input: whole ? c.args : {} } });
            if (!whole) for (const p of splitText(JSON.stringify(c.args), c.splits)) events.push({ type: "content_block_delta", ...at, delta: { type: "input_json_delta", partial_json: p } });
            events.push({ type: "content_block_stop", ...at });
          });
          events.push({ type: "message_delta", delta: { stop_reason: "tool_use" }, usage: { output_tokens: 1 } }, { type: "message_stop" });
          const text = events.map((e: any) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join("");
          const out = await drain(anthropicMessagesEvents(body(text, cuts)));
          expect(out.at(-1).type).toBe("done");
          const got = out.filter((e) => e.type === "tool_call").map((e) => e.call);
          expect(got).toEqual(blocks.map(([c], i) => ({ type: "tool_call", id: `toolu_${i}`, name: c.name, arguments: c.args })));
        },
      ),
      budget,
    );
  });
});
