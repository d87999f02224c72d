// "A streamed secret never goes out, whole or in pieces": the stream redactor (lib/stream-redaction.js)
// over generated secrets (overlapping, prefixes of each other) and text cut into deltas anywhere.
// What it lets out, joined, is exactly the whole text redacted at once; it never holds more than
// (longest secret - 1) characters; and an agent run that streams such text leaves no secret and no
// piece of one in its message_delta events, its ledger event rows or session.messages().
import fc from "fast-check";
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { budget as propertyBudget } from "./budget.js";
import type { AgentEvent, ProviderEvent, RunLedger } from "../../index.js";

const require = createRequire(import.meta.url);
const { createAgent, createSecretRedactor, redactSecrets }: typeof import("../../index.js") = require("../../index.js");
const { createStreamRedactor } = require("../../lib/stream-redaction.js") as {
  createStreamRedactor(o: { secrets?: string[]; redact: (t: string) => string }): { push(t: string): string; flush(): string; held: number };
};

const budget = propertyBudget(400, 10_000);
// Lower-case letters only: no secret can occur inside "[REDACTED]".
const letter = fc.constantFrom("a", "b", "c", " ");
const word = (min: number, max: number) => fc.array(letter, { minLength: min, maxLength: max }).map((l) => l.join(""));

/** Cuts `text` at the given positions (sorted, deduplicated) into deltas. */
function cutAt(text: string, positions: number[]): string[] {
  const at = [...new Set(positions.map((p) => p % (text.length + 1)))].sort((a, b) => a - b);
  const out: string[] = [];
  let from = 0;
  for (const p of at) {
    out.push(text.slice(from, p));
    from = p;
  }
  out.push(text.slice(from));
  return out;
}

function streamed(secrets: string[], deltas: string[]) {
  const s = createStreamRedactor({ secrets, redact: (t) => redactSecrets(t, secrets) as string });
  const longest = Math.max(0, ...secrets.map((x) => x.length));
  const pieces: string[] = [];
  for (const d of deltas) {
    pieces.push(s.push(d));
    expect(s.held).toBeLessThanOrEqual(Math.max(0, longest - 1));
  }
  pieces.push(s.flush());
  expect(s.held).toBe(0);
  return pieces;
}

/** The model: leftmost-longest matching over UTF-16 code units, as JS's `startsWith` sees them. */
function leftmostLongest(text: string, secrets: string[]): string {
  let out = "";
  let i = 0;
  while (i < text.length) {
    let longest = 0;
    for (const s of secrets) if (s.length > longest && text.startsWith(s, i)) longest = s.length;
    if (longest > 0) {
      out += "[REDACTED]";
      i += longest;
    } else {
      out += text[i];
      i += 1;
    }
  }
  return out;
}

describe("createStreamRedactor", () => {
  it("lets out, joined, exactly the whole text redacted at once, holding at most longest - 1 characters", () => {
    fc.assert(
      fc.property(
        fc.array(word(1, 6), { minLength: 1, maxLength: 4 }),
        fc.array(fc.oneof(word(0, 5), fc.nat(3)), { maxLength: 8 }),
        fc.array(fc.nat(), { maxLength: 12 }),
        (secrets, parts, cuts) => {
          const text = parts.map((p) => (typeof p === "number" ? secrets[p % secrets.length] : p)).join("");
          const pieces = streamed(secrets, cutAt(text, cuts));
          expect(pieces.join("")).toBe(redactSecrets(text, secrets));
        },
      ),
      budget,
    );
  });

  it("splits a secret at every position across two and three deltas: no piece of it goes out", () => {
    const S = "sk-live-0123456789abcdef";
    const text = `key is ${S} ok`;
    const start = text.indexOf(S);
    const whole = `key is [REDACTED] ok`;
    for (let i = start; i <= start + S.length; i++) {
      for (let j = i; j <= start + S.length; j++) {
        const pieces = streamed([S], [text.slice(0, i), text.slice(i, j), text.slice(j)]);
        expect(pieces.join("")).toBe(whole);
        for (const p of pieces) for (let k = 2; k <= S.length; k++) expect(p.includes(S.slice(0, k)) && !whole.includes(S.slice(0, k))).toBe(false);
      }
    }
  });

  it("lets out the decided prefix at once (not only at the end)", () => {
    const s = createStreamRedactor({ secrets: ["secret"], redact: (t) => redactSecrets(t, ["secret"]) as string });
    expect(s.push("hello sec")).toBe("hello ");
    expect(s.push("ret and sec")).toBe("[REDACTED] and ");
    expect(s.push("ond")).toBe("second");
    expect(s.flush()).toBe("");
  });

  it("holds a shorter secret while a longer one may still complete (leftmost-longest)", () => {
    const secrets = ["abc", "abcdef"];
    const s = createStreamRedactor({ secrets, redact: (t) => redactSecrets(t, secrets) as string });
    expect(s.push("x abc")).toBe("x ");
    expect(s.push("de")).toBe("");
    expect(s.push("f!")).toBe("[REDACTED]!");
    expect(s.push(" abcd")).toBe(" ");
    expect(s.push("x")).toBe("[REDACTED]dx");
  });

  // Found by fuzz/js/stream-redaction (docs/fuzzing.md): the matcher read text as UTF-8, turning a
  // lone surrogate into U+FFFD when it redacted something and keeping it when it did not. It now
  // matches on UTF-16 code units, as the stream cuts them.
  it("a delta that splits a surrogate pair, or a lone surrogate, joins to the whole text redacted at once", () => {
    const split = streamed(["ab"], ["x\ud83d", "\ude00ab"]);
    expect(split.join("")).toBe(redactSecrets("x\ud83d\ude00ab", ["ab"]));
    expect(split.join("")).toBe("x\ud83d\ude00[REDACTED]");
    const lone = streamed(["ab"], ["\ud83da", "b"]);
    expect(lone.join("")).toBe(redactSecrets("\ud83dab", ["ab"]));
    expect(lone.join("")).toBe("\ud83d[REDACTED]");
  });

  it("over surrogates, halves of pairs and cuts anywhere: streamed equals whole equals code-unit matching", () => {
    // Code units that stress the UTF-16/UTF-8 difference: both halves of a pair, another lone
    // high surrogate, U+FFFD (what a lone surrogate used to become), and letters.
    const unit = fc.constantFrom("a", "b", "\ud83d", "\ude00", "\ud800", "\ufffd", "\ud83d\ude00");
    const units = (min: number, max: number) => fc.array(unit, { minLength: min, maxLength: max }).map((l) => l.join(""));
    fc.assert(
      fc.property(
        fc.array(units(1, 4), { minLength: 1, maxLength: 4 }),
        fc.array(fc.oneof(units(0, 5), fc.nat(3)), { maxLength: 8 }),
        fc.array(fc.nat(), { maxLength: 12 }),
        (secrets, parts, cuts) => {
          const text = parts.map((p) => (typeof p === "number" ? secrets[p % secrets.length] : p)).join("");
          const whole = redactSecrets(text, secrets);
          expect(whole).toBe(leftmostLongest(text, secrets));
          expect(streamed(secrets, cutAt(text, cuts)).join("")).toBe(whole);
          expect(createSecretRedactor(secrets).redact({ t: text })).toEqual({ t: whole });
        },
      ),
      budget,
    );
  });

  it("with an opaque redactor holds everything and redacts the whole text at the end", () => {
    const s = createStreamRedactor({ redact: (t) => t.replaceAll("secret", "#") });
    expect(s.push("a sec")).toBe("");
    expect(s.push("ret b")).toBe("");
    expect(s.flush()).toBe("a # b");
  });
});

// An agent run whose provider streams `text` as `deltas`.
async function agentRun(deltas: string[], secrets: string[] | undefined, redactor?: { redact<T>(v: T): T }) {
  const provider = {
    id: "split",
    async *generate(): AsyncIterable<ProviderEvent> {
      for (const d of deltas) yield { type: "content_delta", content: { type: "text", text: d } } as ProviderEvent;
      yield { type: "done" } as ProviderEvent;
    },
  };
  const rows: any[] = [];
  const runLedger = { appendEvent: (r: unknown) => void rows.push(r), appendRun: () => undefined } as unknown as RunLedger;
  const session = createAgent({ model: { provider: "split", model: "m" }, provider, secrets, redactor, runLedger }).createSession();
  const events: AgentEvent[] = [];
  for await (const e of session.stream("hi")) events.push(e);
  const deltaText = events.filter((e) => e.type === "message_delta").map((e: any) => e.content.text).join("");
  const rowText = rows.filter((r) => r.type === "message_delta").map((r) => r.event.content.text).join("");
  const assistant = session.messages().filter((m) => m.role === "assistant");
  const messageText = assistant.flatMap((m) => m.content).map((b: any) => b.text).join("");
  const finished: any = events.find((e) => e.type === "message_finished");
  const finishedText = finished.message.content.map((b: any) => b.text).join("");
  return { events, rows, deltaText, rowText, messageText, finishedText, all: JSON.stringify([events, rows, session.messages()]) };
}

describe("an agent run streaming a secret split across deltas", () => {
  // Letters outside hex, so no piece of it turns up by chance in the rows' random ids.
  const S = "sk-live-Qz9xWv7tRp5nLm3k";
  const text = `the key is ${S}, keep it`;
  const whole = "the key is [REDACTED], keep it";

  it("at every split position: events, ledger rows and messages hold no piece of the secret", async () => {
    const start = text.indexOf(S);
    for (let i = start + 1; i < start + S.length; i++) {
      const out = await agentRun([text.slice(0, i), text.slice(i)], [S]);
      expect(out.deltaText).toBe(whole);
      expect(out.rowText).toBe(whole);
      expect(out.messageText).toBe(whole);
      expect(out.finishedText).toBe(whole);
      // No piece of the secret longer than its first character (the "s" of "secret" text is everywhere).
      for (let k = 3; k <= S.length; k++) {
        expect(out.all.includes(S.slice(0, k))).toBe(false);
        expect(out.all.includes(S.slice(S.length - k))).toBe(false);
      }
    }
  });

  it("the same with the package's createSecretRedactor and with an opaque host redactor", async () => {
    const cut = [text.slice(0, 15), text.slice(15, 22), text.slice(22)];
    const host = { redact: <T,>(v: T): T => JSON.parse(JSON.stringify(v).replaceAll(S, "[REDACTED]")) };
    for (const redactor of [createSecretRedactor([S]), host]) {
      const out = await agentRun(cut, undefined, redactor);
      expect(out.deltaText).toBe(whole);
      expect(out.messageText).toBe(whole);
      expect(out.all.includes(S.slice(0, 8))).toBe(false);
      expect(out.all.includes(S.slice(-8))).toBe(false);
    }
  });

  it("over generated cuts: the deltas let out, joined, are the whole text redacted", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.nat(), { maxLength: 10 }), async (cuts) => {
        const out = await agentRun(cutAt(text, cuts), [S]);
        expect(out.deltaText).toBe(whole);
        expect(out.messageText).toBe(whole);
      }),
      propertyBudget(60, 10_000),
    );
  });
});
