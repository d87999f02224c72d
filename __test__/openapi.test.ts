// prism-tools-native/openapi against a real HTTP server on 127.0.0.1: requests built from checked arguments,
// sent through the secure fetch (loopback only when allowed, every resolved address checked), bounded
// responses, retries and pagination, and hostile documents refused with a code and a message that names
// the operation. Dispatch runs the tools as an agent would.
import { describe, expect, it } from "vitest";
import { serversClosedAfterEach } from "./helpers/http-servers.js";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createJsonSchemaToolArgumentValidator, createSecretRedactor, createToolRegistry, dispatchToolCall } from "../index.mjs";
import { createOpenApiTools, OpenApiToolError, HARD_OPENAPI_LIMITS } from "../openapi/index.mjs";

type Seen = { method: string; url: string; headers: IncomingMessage["headers"]; body: string };
const servers = serversClosedAfterEach();

async function listen(handler: (req: IncomingMessage, res: ServerResponse, seen: Seen) => void) {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      const entry = { method: req.method!, url: req.url!, headers: req.headers, body };
      seen.push(entry);
      handler(req, res, entry);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  return { base: `http://127.0.0.1:${(server.address() as { port: number }).port}`, seen };
}

function json(res: ServerResponse, status: number, value: unknown) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(value));
}

const DOC = {
  openapi: "3.1.0",
  info: { title: "shop", version: "1" },
  servers: [{ url: "/v1" }],
  paths: {
    "/v1/orders/{id}": {
      parameters: [{ $ref: "#/components/parameters/OrderId" }],
      get: {
        operationId: "getOrder",
        summary: "Get an order",
        parameters: [
          { name: "fields", in: "query", schema: { type: "array", items: { type: "string" } } },
          { name: "X-Request-Id", in: "header", schema: { type: "string" } },
        ],
        responses: {},
      },
    },
    "/v1/orders": {
      get: {
        operationId: "listOrders",
        parameters: [{ name: "cursor", in: "query", schema: { type: "string" } }],
        responses: {},
      },
      post: {
        operationId: "createOrder",
        requestBody: { $ref: "#/components/requestBodies/NewOrder" },
        responses: {},
      },
    },
  },
  components: {
    parameters: { OrderId: { name: "id", in: "path", required: true, schema: { type: "string", minLength: 1 } } },
    requestBodies: {
      NewOrder: { required: true, content: { "application/json": { schema: { $ref: "#/components/schemas/Order" } } } },
    },
    schemas: {
      Order: {
        type: "object",
        properties: { sku: { type: "string" }, qty: { $ref: "#/components/schemas/Qty", description: "how many" } },
        required: ["sku", "qty"],
        additionalProperties: false,
      },
      Qty: { type: "integer", minimum: 1 },
    },
  },
};

const ctx = (extra: Record<string, unknown> = {}) => ({ sessionId: "s", runId: "r", toolCallId: "t1", ...extra });

function refusal(fn: () => unknown): OpenApiToolError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(OpenApiToolError);
    return error as OpenApiToolError;
  }
  throw new Error("expected a throw");
}

async function rejection(promise: Promise<unknown>): Promise<{ code?: string; message: string; name?: string }> {
  try {
    await promise;
  } catch (error) {
    return error as { code?: string; message: string };
  }
  throw new Error("expected a rejection");
}

function withOperation(path: string, method: string, operation: Record<string, unknown>, schemas: Record<string, unknown> = {}) {
  const doc = structuredClone(DOC) as Record<string, any>;
  doc.paths[path] = { ...(doc.paths[path] ?? {}), [method]: operation };
  Object.assign(doc.components.schemas, schemas);
  return doc;
}

describe("openapi tools against a local server", () => {
  it("builds path, query, header and JSON body from the arguments and returns untrusted data", async () => {
    const { base, seen } = await listen((req, res, s) => json(res, 200, { ok: true, echo: s.url }));
    const tools = createOpenApiTools({
      document: DOC,
      operations: ["getOrder", "createOrder"],
      server: base,
      allowLoopbackHttp: true,
      credentials: ({ operationId }) => ({ headers: { authorization: `Bearer tok-${operationId}` } }),
    });
    expect(tools.map((t) => t.name)).toEqual(["getOrder", "createOrder"]);
    expect(tools[0].effect).toEqual({ kind: "none", idempotency: "none" });
    expect(tools[1].effect).toEqual({ kind: "external_mutation", idempotency: "required" });
    // The referenced parameter and body are inlined; a $ref beside "description" keeps both.
    expect((tools[0].parameters as any).properties.id).toEqual({ type: "string", minLength: 1 });
    expect((tools[1].parameters as any).properties.body.properties.qty).toEqual({ description: "how many", allOf: [{ type: "integer", minimum: 1 }] });

    const got = await tools[0].execute({ id: "a/b c", fields: ["x", "y"], "X-Request-Id": "rq-1" }, ctx());
    expect(seen[0].method).toBe("GET");
    expect(seen[0].url).toBe("/v1/orders/a%2Fb%20c?fields=x&fields=y");
    expect(seen[0].headers["x-request-id"]).toBe("rq-1");
    expect(seen[0].headers.authorization).toBe("Bearer tok-getOrder");
    expect((got as any).value).toEqual({ status: 200, body: { ok: true, echo: "/v1/orders/a%2Fb%20c?fields=x&fields=y" } });
    expect((got as any).metadata).toMatchObject({ trust: "untrusted_external", operationId: "getOrder", method: "GET" });

    await tools[1].execute({ body: { sku: "k1", qty: 2 } }, ctx({ idempotencyKey: "idem-1" }));
    expect(seen[1].method).toBe("POST");
    expect(seen[1].headers["content-type"]).toBe("application/json");
    expect(JSON.parse(seen[1].body)).toEqual({ sku: "k1", qty: 2 });
    expect(seen[1].headers["idempotency-key"]).toBeUndefined(); // not opted in
  });

  it("runs through dispatch: invalid arguments never reach the server", async () => {
    const { base, seen } = await listen((_req, res) => json(res, 200, { id: "o-1" }));
    const registry = createToolRegistry(createOpenApiTools({ document: DOC, operations: ["getOrder"], server: base, allowLoopbackHttp: true }));
    const validate = createJsonSchemaToolArgumentValidator();
    const call = (args: Record<string, unknown>) =>
      dispatchToolCall({ call: { type: "tool_call", id: "c1", name: "getOrder", arguments: args }, registry, context: ctx(), validate });
    const bad = await call({ id: "" });
    expect(bad.error?.message).toMatch(/\/id/);
    expect(seen).toHaveLength(0);
    const good = await call({ id: "o-1" });
    expect(good.error).toBeUndefined();
    expect(good.value).toEqual({ status: 200, body: { id: "o-1" } });
    expect(seen.map((s) => s.url)).toEqual(["/v1/orders/o-1"]);
  });

  it("sends the call's idempotency key on a mutation when asked", async () => {
    const { base, seen } = await listen((_req, res) => json(res, 201, {}));
    const [getOrder, createOrder] = createOpenApiTools({ document: DOC, operations: ["getOrder", "createOrder"], server: base, allowLoopbackHttp: true, idempotencyKeyHeader: true });
    await getOrder.execute({ id: "1" }, ctx({ idempotencyKey: "k-9" }));
    await createOrder.execute({ body: { sku: "k1", qty: 1 } }, ctx({ idempotencyKey: "k-9" }));
    expect(seen.map((s) => s.headers["idempotency-key"])).toEqual([undefined, "k-9"]);
  });

  it("checks arguments on a direct execute call, naming the tool and the field", async () => {
    const { base, seen } = await listen((_req, res) => json(res, 200, {}));
    const [getOrder] = createOpenApiTools({ document: DOC, operations: ["getOrder"], server: base, allowLoopbackHttp: true });
    const wrong = await rejection(getOrder.execute({ id: 7 } as any, ctx()));
    expect(wrong.code).toBe("ERR_PRISM_OPENAPI_ARGUMENTS");
    expect(wrong.message).toMatch(/getOrder.*\/id/);
    const extra = await rejection(getOrder.execute({ id: "1", admin: true } as any, ctx()));
    expect(extra.code).toBe("ERR_PRISM_OPENAPI_ARGUMENTS");
    const split = await rejection(getOrder.execute({ id: "1", "X-Request-Id": "a\r\nX-Admin: 1" }, ctx()));
    expect(split.code).toBe("ERR_PRISM_OPENAPI_ARGUMENTS");
    expect(split.message).toMatch(/X-Request-Id/);
    expect(seen).toHaveLength(0);
  });

  it("refuses a loopback server unless allowed, and a name that resolves to a non-public address", async () => {
    const { base, seen } = await listen((_req, res) => json(res, 200, {}));
    const noLoopback = refusal(() => createOpenApiTools({ document: DOC, operations: ["getOrder"], server: base }));
    expect(noLoopback.code).toBe("ERR_PRISM_OPENAPI_ADDRESS");
    expect(noLoopback.message).toMatch(/allowLoopbackHttp/);

    // A public name whose DNS answer is private (the rebinding case) is refused at the call, before a connect.
    const port = new URL(base).port;
    for (const address of ["127.0.0.1", "10.1.2.3", "169.254.169.254"]) {
      const [tool] = createOpenApiTools({
        document: DOC,
        operations: ["getOrder"],
        server: `https://api.example.test:${port}`,
        resolveHostname: async () => [{ address, family: 4 }],
      });
      const error = await rejection(tool.execute({ id: "1" }, ctx()));
      expect(error.code).toBe("ERR_PRISM_OPENAPI_ADDRESS");
      expect(error.message).toMatch(/non-public/);
    }
    // `localhost` with loopback allowed must resolve to loopback only.
    const [local] = createOpenApiTools({
      document: DOC,
      operations: ["getOrder"],
      server: `http://localhost:${port}`,
      allowLoopbackHttp: true,
      resolveHostname: async () => [{ address: "10.0.0.5", family: 4 }],
    });
    expect((await rejection(local.execute({ id: "1" }, ctx()))).code).toBe("ERR_PRISM_OPENAPI_ADDRESS");
    expect(seen).toHaveLength(0);
  });

  it("does not follow redirects", async () => {
    const target = await listen((_req, res) => json(res, 200, { leaked: true }));
    const { base } = await listen((_req, res) => {
      res.writeHead(302, { location: `${target.base}/v1/orders/1` });
      res.end();
    });
    const [tool] = createOpenApiTools({ document: DOC, operations: ["getOrder"], server: base, allowLoopbackHttp: true });
    const result = await tool.execute({ id: "1" }, ctx());
    expect((result as any).value.status).toBe(302);
    expect(target.seen).toHaveLength(0);
  });

  it("bounds the response while it streams", async () => {
    const { base } = await listen((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ blob: "x".repeat(200_000) }));
    });
    const [tool] = createOpenApiTools({ document: DOC, operations: ["getOrder"], server: base, allowLoopbackHttp: true, limits: { maxResponseBytes: 4096 } });
    const error = await rejection(tool.execute({ id: "1" }, ctx()));
    expect(error.code).toBe("ERR_PRISM_OPENAPI_RESPONSE_BOUNDS");
    expect(error.message).toMatch(/maxResponseBytes \(4096\)/);
  });

  it("redacts the response text before it becomes the result", async () => {
    const { base } = await listen((_req, res) => json(res, 200, { token: "sk-live-123" }));
    const [tool] = createOpenApiTools({ document: DOC, operations: ["getOrder"], server: base, allowLoopbackHttp: true, redactor: createSecretRedactor(["sk-live-123"]) });
    const result = await tool.execute({ id: "1" }, ctx());
    expect(JSON.stringify(result)).not.toContain("sk-live-123");
  });

  it("retries a 5xx up to maxRetries and reports a refused connection after its retries", async () => {
    let calls = 0;
    const { base } = await listen((_req, res) => (++calls < 3 ? json(res, 503, {}) : json(res, 200, { ok: 1 })));
    const [tool] = createOpenApiTools({ document: DOC, operations: ["getOrder"], server: base, allowLoopbackHttp: true, limits: { maxRetries: 2 } });
    expect(((await tool.execute({ id: "1" }, ctx())) as any).value).toEqual({ status: 200, body: { ok: 1 } });
    expect(calls).toBe(3);

    // A port nothing listens on: each attempt is refused by the kernel.
    const closed = await listen(() => {});
    const port = new URL(closed.base).port;
    const server = servers.pop()!;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const [down] = createOpenApiTools({ document: DOC, operations: ["getOrder"], server: `http://127.0.0.1:${port}`, allowLoopbackHttp: true, limits: { maxRetries: 1 } });
    const error = await rejection(down.execute({ id: "1" }, ctx()));
    expect(error.code).toBe("ERR_PRISM_OPENAPI_RETRY_EXHAUSTED");
    expect(error.message).toMatch(/after 1 retries/);
  });

  it("ends a call whose signal aborts, without retrying", async () => {
    let calls = 0;
    const { base } = await listen(() => {
      calls++; // never answers
    });
    const [tool] = createOpenApiTools({ document: DOC, operations: ["getOrder"], server: base, allowLoopbackHttp: true, limits: { maxRetries: 3 } });
    const controller = new AbortController();
    const pending = tool.execute({ id: "1" }, ctx({ signal: controller.signal }));
    while (calls === 0) await new Promise((r) => setTimeout(r, 5));
    controller.abort(new Error("user stopped"));
    expect((await rejection(pending)).message).toBe("user stopped");
    expect(calls).toBe(1);
  });

  it("paginates by cursor within maxPages and maxPaginationItems", async () => {
    const { base, seen } = await listen((req, res) => {
      const cursor = new URL(req.url!, "http://x").searchParams.get("cursor");
      if (cursor === null) json(res, 200, { data: { rows: [1, 2] }, meta: { next: "c2" } });
      else if (cursor === "c2") json(res, 200, { data: { rows: [3] }, meta: { next: "c3" } });
      else json(res, 200, { data: { rows: [4] } });
    });
    const pagination = { pageParam: "cursor", pageSizeParam: "limit", pageSize: 2, nextPath: "meta.next", itemsPath: "data.rows" };
    const [list] = createOpenApiTools({ document: DOC, operations: ["listOrders"], server: base, allowLoopbackHttp: true, pagination });
    expect(((await list.execute({}, ctx())) as any).value).toEqual({ status: 200, pageCount: 3, items: [1, 2, 3, 4] });
    expect(seen.map((s) => s.url)).toEqual(["/v1/orders?limit=2", "/v1/orders?cursor=c2&limit=2", "/v1/orders?cursor=c3&limit=2"]);

    const [short] = createOpenApiTools({ document: DOC, operations: ["listOrders"], server: base, allowLoopbackHttp: true, pagination, limits: { maxPages: 2 } });
    expect((await rejection(short.execute({}, ctx()))).message).toMatch(/maxPages \(2\)/);
    const [few] = createOpenApiTools({ document: DOC, operations: ["listOrders"], server: base, allowLoopbackHttp: true, pagination, limits: { maxPaginationItems: 3 } });
    expect((await rejection(few.execute({}, ctx()))).message).toMatch(/maxPaginationItems \(3\)/);
  });
});

describe("openapi documents that are hostile or unsupported", () => {
  const make = (document: unknown, operations = ["getOrder"], extra: Record<string, unknown> = {}) =>
    createOpenApiTools({ document: document as any, operations, server: "https://api.example.test", fetch: async () => new Response("{}"), ...extra });

  it("names a $ref cycle instead of inlining it", () => {
    const doc = withOperation("/v1/nodes", "post", { operationId: "addNode", requestBody: { content: { "application/json": { schema: { $ref: "#/components/schemas/Node" } } } } }, {
      Node: { type: "object", properties: { child: { $ref: "#/components/schemas/Node" } } },
    });
    const error = refusal(() => make(doc, ["addNode"]));
    expect(error.code).toBe("ERR_PRISM_OPENAPI_SCHEMA_BOUNDS");
    expect(error.message).toBe("requestBody of addNode: $ref cycle at #/components/schemas/Node");
  });

  it("counts refs over the whole compile, so refs that fan out stay bounded", () => {
    // Each level refers to the next one 8 times: 8^6 expansions if inlined without a shared count.
    const schemas: Record<string, unknown> = { L6: { type: "string" } };
    for (let i = 0; i < 6; i++) {
      schemas[`L${i}`] = { type: "object", properties: Object.fromEntries(Array.from({ length: 8 }, (_, k) => [`p${k}`, { $ref: `#/components/schemas/L${i + 1}` }])) };
    }
    const doc = withOperation("/v1/fan", "post", { operationId: "fan", requestBody: { content: { "application/json": { schema: { $ref: "#/components/schemas/L0" } } } } }, schemas);
    const error = refusal(() => make(doc, ["fan"]));
    expect(error.code).toBe("ERR_PRISM_OPENAPI_SCHEMA_BOUNDS");
    expect(error.message).toMatch(/maxRefs \(1024\)/);
  });

  it("refuses a schema this package's validator refuses, naming the operation", () => {
    const doc = withOperation("/v1/search", "get", { operationId: "search", parameters: [{ name: "q", in: "query", schema: { type: "string", pattern: "((" } }] });
    const error = refusal(() => make(doc, ["search"]));
    expect(error.code).toBe("ERR_PRISM_OPENAPI_SCHEMA_BOUNDS");
    expect(error.message).toMatch(/^argument schema of search is refused: .*pattern/);
  });

  it("bounds documents that are cyclic, deep, oversized or not OpenAPI 3.1", () => {
    const cyclic: any = structuredClone(DOC);
    cyclic.info.self = cyclic;
    expect(refusal(() => make(cyclic)).message).toMatch(/cycle/);
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    const deepDoc = { ...structuredClone(DOC), "x-deep": deep };
    expect(refusal(() => make(deepDoc)).code).toBe("ERR_PRISM_OPENAPI_DOCUMENT_BOUNDS");
    const deepText = JSON.stringify(DOC).replace(/^\{/, `{"x-deep":${"[".repeat(100_000)}${"]".repeat(100_000)},`);
    expect(refusal(() => make(deepText)).message).toMatch(/depth 512/);
    expect(refusal(() => make(DOC, ["getOrder"], { limits: { maxDocumentBytes: 512 } })).message).toMatch(/maxDocumentBytes \(512\)/);
    expect(refusal(() => make({ ...DOC, openapi: "3.0.3" })).message).toBe("only OpenAPI 3.1 documents are supported");
    expect(refusal(() => make(DOC, ["getOrder"], { limits: { maxRetries: HARD_OPENAPI_LIMITS.maxRetries + 1 } })).message).toMatch(/hard cap/);
    expect(refusal(() => make(DOC, ["getOrder"], { limits: { maxRetires: 1 } })).message).toMatch(/maxRetires is not a known limit/);
  });

  it("refuses parameters it cannot send faithfully", () => {
    const badHeader = withOperation("/v1/h", "get", { operationId: "h", parameters: [{ name: "X Bad", in: "header", schema: { type: "string" } }] });
    expect(refusal(() => make(badHeader, ["h"])).message).toMatch(/not a valid header name: X Bad of h/);
    const stray = withOperation("/v1/s", "get", { operationId: "s", parameters: [{ name: "id", in: "path", required: true, schema: { type: "string" } }] });
    expect(refusal(() => make(stray, ["s"])).message).toMatch(/path parameter id of s is not in its path/);
    const where = withOperation("/v1/w", "get", { operationId: "w", parameters: [{ name: "q", in: "body", schema: {} }] });
    expect(refusal(() => make(where, ["w"])).message).toMatch(/unknown location: body/);
  });

  it("never echoes a credential in an error", async () => {
    const [tool] = createOpenApiTools({
      document: DOC,
      operations: ["getOrder"],
      server: "https://api.example.test",
      credentials: () => ({ headers: { authorization: "Bearer s3cr3t\r\nX: y" } }),
      fetch: async () => new Response("{}"),
    });
    const error = await rejection(tool.execute({ id: "1" }, ctx()));
    expect(error.code).toBe("ERR_PRISM_OPENAPI_ARGUMENTS");
    expect(error.message).toBe("credentials header authorization contains a control character");
  });
});

describe("openapi names that are JavaScript's own", () => {
  it("refuses __proto__, prototype and constructor as names, naming the operation", () => {
    // Written plainly, `properties.__proto__ = schema` would set a prototype and drop the parameter
    // without a word; the validator must see the key to refuse it.
    for (const name of ["__proto__", "prototype", "constructor"]) {
      const doc = withOperation("/v1/p", "get", { operationId: "p", parameters: [{ name, in: "query", schema: { type: "string" } }] });
      const refused = refusal(() => createOpenApiTools({ document: JSON.stringify(doc), operations: ["p"], server: "https://api.example.test" }));
      expect(refused.code).toBe("ERR_PRISM_OPENAPI_SCHEMA_BOUNDS");
      expect(refused.message).toBe(`argument schema of p is refused: schema uses forbidden JSON key "${name}" at #/properties/${name}`);
    }
  });

  it("keeps toString and hasOwnProperty as data, and never sends what is inherited", async () => {
    const { base, seen } = await listen((_req, res) => json(res, 200, {}));
    const doc = withOperation("/v1/odd/{toString}", "post", {
      operationId: "odd",
      parameters: [
        { name: "toString", in: "path", required: true, schema: { type: "string" } },
        { name: "valueOf", in: "query", schema: { type: "string" } },
      ],
      requestBody: { content: { "application/json": { schema: { type: "object", properties: { hasOwnProperty: { type: "integer" } }, additionalProperties: false } } } },
    });
    const [tool] = createOpenApiTools({ document: doc, operations: ["odd"], server: base, allowLoopbackHttp: true });
    expect(Object.keys((tool.parameters as any).properties)).toEqual(["toString", "valueOf", "body"]);
    expect((await rejection(tool.execute({ toString: "c", body: { hasOwnProperty: "x" } } as any, ctx()))).code).toBe("ERR_PRISM_OPENAPI_ARGUMENTS");
    await tool.execute({ toString: "c", valueOf: "q", body: { hasOwnProperty: 1 } } as any, ctx());
    expect(seen[0].url).toBe("/v1/odd/c?valueOf=q");
    expect(seen[0].body).toBe('{"hasOwnProperty":1}');
    // Absent optional `valueOf`: the inherited method is not sent.
    await tool.execute({ toString: "c" } as any, ctx());
    expect(seen[1].url).toBe("/v1/odd/c");
  });
});
