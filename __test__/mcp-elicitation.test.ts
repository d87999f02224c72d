// MCP elicitation mapped onto the package's decisions, with `@arnilo/prism-mcp`'s names and limits, and
// end to end: a real server's `elicitation/create` reaches the host's decision flow through the
// capability client, and only a bounded answer that a human gave and that matches the requested schema
// goes back.
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import {
  attachMcpCapabilities,
  createMcpCapabilityClient,
  MAX_MCP_ELICITATION_MESSAGE_BYTES,
  MAX_MCP_ELICITATION_SCHEMA_BYTES,
  mcpElicitationDecision,
  mcpElicitationResultFromDecision,
} from "../mcp/index.mjs";

const require = createRequire(import.meta.url);
const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
const { InMemoryTransport } = require("@modelcontextprotocol/sdk/inMemory.js");

const regionSchema = { type: "object", required: ["region"], properties: { region: { type: "string", enum: ["eu", "us"] } } };

describe("mcpElicitationDecision", () => {
  it("maps a request onto a pending decision of kind elicitation", () => {
    expect(mcpElicitationDecision("a1", { message: "Which region?", requestedSchema: regionSchema }, { toolName: "deploy" })).toEqual({
      approvalId: "a1",
      kind: "elicitation",
      scope: { toolName: "deploy" },
      reason: "Which region?",
      elicitationSchema: regionSchema,
    });
    expect(mcpElicitationDecision("a2", { message: "Name?" }).elicitationSchema).toEqual({ type: "object" });
    expect(MAX_MCP_ELICITATION_MESSAGE_BYTES).toBe(2048);
    expect(MAX_MCP_ELICITATION_SCHEMA_BYTES).toBe(16 * 1024);
  });

  it("refuses malformed, oversized or unusable requests with a code", () => {
    const cases: [unknown, string, string][] = [
      [null, "MCP elicitation params must be an object", "ERR_PRISM_MCP_ELICITATION"],
      [{ message: 42 }, "MCP elicitation message must be a string", "ERR_PRISM_MCP_ELICITATION"],
      [{ message: "x".repeat(2049) }, "MCP elicitation message exceeds 2048 bytes", "ERR_PRISM_MCP_LIMIT"],
      [{ message: "m", requestedSchema: { pad: "x".repeat(17 * 1024) } }, "MCP elicitation schema exceeds 16384 bytes", "ERR_PRISM_MCP_LIMIT"],
    ];
    for (const [params, message, code] of cases) {
      expect(() => mcpElicitationDecision("a1", params)).toThrow(expect.objectContaining({ name: "McpBridgeError", message, code }));
    }
    expect(() => mcpElicitationDecision("a1", { message: "m", requestedSchema: { type: "objekt" } })).toThrow(/^MCP elicitation schema refused: schema keyword "type"/);
  });
});

describe("mcpElicitationResultFromDecision", () => {
  const pending = mcpElicitationDecision("a1", { message: "Which region?", requestedSchema: regionSchema });

  it("declines a rejection; accepts only a payload a human gave", () => {
    expect(mcpElicitationResultFromDecision({ approvalId: "a1", outcome: "reject_once" })).toEqual({ action: "decline" });
    expect(mcpElicitationResultFromDecision({ approvalId: "a1", outcome: "reject_for_run" })).toEqual({ action: "decline" });
    expect(() => mcpElicitationResultFromDecision({ approvalId: "a1", outcome: "allow_once" })).toThrow("Accepted MCP elicitation requires an elicitation payload");
    expect(() => mcpElicitationResultFromDecision({ approvalId: "a1", outcome: "allow_once", elicitation: { region: "eu" } })).toThrow(
      "Accepted MCP elicitation requires explicit human interaction",
    );
    expect(mcpElicitationResultFromDecision({ approvalId: "a1", outcome: "allow_once", elicitation: { region: "eu" } }, { humanInteraction: true, pending })).toEqual({
      action: "accept",
      content: { region: "eu" },
      humanInteraction: true,
    });
  });

  it("checks the payload against the requested schema and its byte limit", () => {
    const bad = (elicitation: unknown, options: Record<string, unknown> = { humanInteraction: true, pending }) => {
      try {
        mcpElicitationResultFromDecision({ approvalId: "a1", outcome: "allow_once", elicitation } as any, options);
      } catch (error: any) {
        return [error.code, error.message];
      }
      return undefined;
    };
    expect(bad({ region: "mars" })).toEqual(["ERR_PRISM_MCP_ELICITATION_INVALID", expect.stringMatching(/^MCP elicitation payload does not match the requested schema at \/region: /)]);
    expect(bad({})).toEqual(["ERR_PRISM_MCP_ELICITATION_INVALID", expect.stringMatching(/^MCP elicitation payload does not match the requested schema/)]);
    expect(bad({ region: "eu" }, { humanInteraction: true, requestedSchema: { type: "object", properties: { region: { type: "integer" } } } })?.[0]).toBe("ERR_PRISM_MCP_ELICITATION_INVALID");
    expect(bad({ region: "eu", note: "x".repeat(17 * 1024) }, { humanInteraction: true })).toEqual(["ERR_PRISM_MCP_LIMIT", "MCP elicitation payload exceeds 16384 bytes"]);
    expect(bad(["eu"])).toEqual(["ERR_PRISM_MCP_ELICITATION", "MCP elicitation payload must be an object"]);
    expect(bad({ region: "eu" }, { humanInteraction: true, pending: { ...pending, approvalId: "other" } })).toEqual([
      "ERR_PRISM_MCP_ELICITATION",
      "MCP elicitation decision is for another approvalId",
    ]);
  });
});

describe("a server's elicitation/create", () => {
  async function connect(answer: (decision: any) => { outcome: string; elicitation?: unknown; human?: boolean }) {
    const server = new McpServer({ name: "asks", version: "1" }, { capabilities: { tools: {} } });
    server.registerTool("deploy", { description: "Asks where to deploy" }, async () => {
      try {
        const reply = await server.server.elicitInput({ message: "Which region?", requestedSchema: regionSchema });
        return { content: [{ type: "text", text: JSON.stringify(reply) }] };
      } catch (error: any) {
        return { content: [{ type: "text", text: `failed: ${error.message}` }], isError: true };
      }
    });
    const seen: any[] = [];
    const client = createMcpCapabilityClient({
      serverId: "asks",
      elicitation: async ({ params }: any) => {
        const pending = mcpElicitationDecision("e1", params, { toolName: "deploy" });
        seen.push(pending);
        const decision = answer(pending);
        if (decision.human === false) return { action: "accept", content: decision.elicitation };
        return mcpElicitationResultFromDecision({ approvalId: "e1", ...decision } as any, { humanInteraction: true, pending });
      },
    } as any);
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
    await server.connect(serverTransport);
    await (client as any).connect(clientTransport);
    const bridge: any = await attachMcpCapabilities(client, clientTransport, { serverId: "asks" });
    return { bridge, seen };
  }
  const deploy = (bridge: any) => bridge.tools[0].execute({}, { sessionId: "s", runId: "r", toolCallId: "c1" });

  it("reaches the host as a pending decision; the accepted answer goes back without the marker", async () => {
    const { bridge, seen } = await connect(() => ({ outcome: "allow_once", elicitation: { region: "eu" } }));
    try {
      const result: any = await deploy(bridge);
      expect(JSON.parse(result.content[0].text)).toEqual({ action: "accept", content: { region: "eu" } });
      expect(seen).toEqual([{ approvalId: "e1", kind: "elicitation", scope: { toolName: "deploy" }, reason: "Which region?", elicitationSchema: regionSchema }]);
    } finally {
      await bridge.close();
    }
  });

  it("a rejection declines; an answer outside the schema or without a human never reaches the server", async () => {
    const declined = await connect(() => ({ outcome: "reject_once" }));
    try {
      expect(JSON.parse((await deploy(declined.bridge)).content[0].text)).toEqual({ action: "decline" });
    } finally {
      await declined.bridge.close();
    }
    const wrong = await connect(() => ({ outcome: "allow_once", elicitation: { region: "mars" } }));
    try {
      const result: any = await deploy(wrong.bridge);
      expect(result.content[0].text).toMatch(/^failed: .*MCP elicitation payload does not match the requested schema/);
      expect(result.content[0].text).not.toContain('"action"');
    } finally {
      await wrong.bridge.close();
    }
    const unattended = await connect(() => ({ outcome: "allow_once", elicitation: { region: "eu" }, human: false }));
    try {
      expect((await deploy(unattended.bridge)).content[0].text).toMatch(/^failed: .*Accepted MCP elicitation requires explicit human interaction/);
    } finally {
      await unattended.bridge.close();
    }
  });
});
