// "Telemetry cuts strings between characters", over generated status messages and attribute values
// around the 1 024-byte bound: ASCII, two- and three-byte characters, surrogate pairs and lone
// surrogates, in any order, so the cut lands at every kind of position. What is exported is the
// longest prefix of the text within 1 024 UTF-8 bytes that splits no surrogate pair.
import fc from "fast-check";
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { budget as propertyBudget } from "./budget.js";

const require = createRequire(import.meta.url);
const { createInMemoryTelemetry, createOpenTelemetryInstrumentation } = require("../../opentelemetry/index.js");

const LIMIT = 1024;
const unit = fc.constantFrom("a", "é", "€", "😀", "\ud83d", "\ude00", "𝄞");
const text = fc.tuple(fc.integer({ min: 0, max: LIMIT }), fc.array(unit, { minLength: 0, maxLength: 400 })).map(([ascii, rest]) => "x".repeat(ascii) + rest.join(""));

/** UTF-8 bytes as Buffer.byteLength counts them (a lone surrogate as U+FFFD's three). */
const bytes = (s: string) => Buffer.byteLength(s);

describe("telemetry cuts", () => {
  it("status messages and attributes are the longest prefix within 1 024 bytes that splits no pair", () => {
    fc.assert(
      fc.property(text, (message: string) => {
        const memory = createInMemoryTelemetry();
        const telemetry = createOpenTelemetryInstrumentation({ tracer: memory.tracer });
        telemetry.handleAgentEvent({ type: "agent_started", sessionId: "s", runId: "r" });
        telemetry.handleAgentEvent({ type: "tool_execution_started", sessionId: "s", runId: "r", call: { type: "tool_call", id: "c", name: message, arguments: {} } });
        telemetry.handleAgentEvent({ type: "tool_execution_error", sessionId: "s", runId: "r", call: { type: "tool_call", id: "c", name: "t", arguments: {} }, error: { message }, metadata: { durationMs: 1, status: "error" } });
        const span = memory.spans.find((s: any) => s.attributes["gen_ai.operation.name"] === "execute_tool");
        for (const out of [span.status.message as string, span.attributes["gen_ai.tool.name"] as string]) {
          expect(message.startsWith(out)).toBe(true);
          expect(bytes(out)).toBeLessThanOrEqual(LIMIT);
          if (out.length < message.length) {
            // Not through a pair: the cut never ends on the first half of a pair the text holds whole.
            const last = out.charCodeAt(out.length - 1);
            const next = message.charCodeAt(out.length);
            expect(last >= 0xd800 && last <= 0xdbff && next >= 0xdc00 && next <= 0xdfff).toBe(false);
            // Longest: the next character (a pair whole) would not fit.
            const step = next >= 0xd800 && next <= 0xdbff && (message.charCodeAt(out.length + 1) & 0xfc00) === 0xdc00 ? 2 : 1;
            expect(bytes(message.slice(0, out.length + step))).toBeGreaterThan(LIMIT);
          }
        }
      }),
      propertyBudget(300, 5_000),
    );
  });
});
