import { describe, expect, it } from "vitest";
import {
  ContributionRegistry,
  createContributionRegistries,
  createExtensionKernel,
  createMiddlewareRegistry,
  createStaticPermissionPolicy,
  type ExtensionEvent,
} from "../index.js";

const echo = { name: "echo", execute: () => ({ toolCallId: "c", name: "echo" }) };

describe("contribution registries", () => {
  it("stores tools by name and hands back the very object", () => {
    const c = createContributionRegistries();
    c.tools.register("echo", echo);
    expect(c.tools.get("echo")).toBe(echo);
    expect(c.tools.resolve("echo")).toBe(echo);
    expect(c.tools.list()).toEqual([echo]);
    expect(c.tools.list()[0]).toBe(echo);
  });

  it("get answers undefined and resolve throws `Unknown tool: <name>` for an unknown name", () => {
    const c = createContributionRegistries();
    expect(c.tools.get("nope")).toBeUndefined();
    expect(() => c.tools.resolve("nope")).toThrow("Unknown tool: nope");
    try {
      c.tools.resolve("nope");
    } catch (e) {
      expect(e).toMatchObject({ name: "Error", code: "ERR_PRISM_UNKNOWN_CONTRIBUTION" });
    }
  });

  it("replacing a name keeps its first position; unregister removes it", () => {
    const c = createContributionRegistries();
    const a = { name: "a" };
    const b = { name: "b" };
    const a2 = { name: "a", v: 2 };
    c.tools.register("a", a);
    c.tools.register("b", b);
    c.tools.register("a", a2);
    expect(c.tools.list()).toEqual([a2, b]);
    expect(c.tools.unregister("a")).toBe(true);
    expect(c.tools.unregister("a")).toBe(false);
    expect(c.tools.list()).toEqual([b]);
  });

  it("refuses non-string names and non-object contributions", () => {
    const c = createContributionRegistries();
    expect(() => c.tools.register(1 as never, echo)).toThrow("A tool contribution name must be a string");
    expect(() => c.tools.register("x", "tool" as never)).toThrow('The tool contribution "x" must be an object');
    expect(() => c.tools.register("x", undefined as never)).toThrow(TypeError);
    expect(c.tools.get(1 as never)).toBeUndefined();
    expect(c.tools.list()).toEqual([]);
  });

  it("a ContributionRegistry with a label names it in messages", () => {
    const r = new ContributionRegistry<{ id: string }>("skill");
    expect(() => r.resolve("s")).toThrow("Unknown skill: s");
    expect(() => new ContributionRegistry().resolve("s")).toThrow("Unknown contribution: s");
  });

  it("contributions are inert: registering never calls the tool", () => {
    let calls = 0;
    const tool = {
      name: "t",
      execute: () => {
        calls++;
      },
    };
    const c = createContributionRegistries();
    c.tools.register("t", tool);
    c.tools.get("t");
    c.tools.list();
    expect(calls).toBe(0);
  });
});

describe("extension kernel", () => {
  it("load gives setup registerTool and use, into the kernel's registries", async () => {
    const kernel = createExtensionKernel();
    const mw = (v: unknown) => v;
    const loaded = await kernel.load([
      {
        name: "tools",
        setup(api) {
          expect(api.name).toBe("tools");
          api.registerTool(echo);
          api.use("tool_call", mw);
        },
      },
    ]);
    expect(loaded.map((l) => l.name)).toEqual(["tools"]);
    expect(kernel.contributions.tools.resolve("echo")).toBe(echo);
    expect(kernel.registries).toBe(kernel.contributions);
    expect(kernel.middleware.list("tool_call")).toEqual([mw]);
  });

  it("awaits async setups in order", async () => {
    const order: string[] = [];
    const kernel = createExtensionKernel();
    await kernel.load([
      {
        name: "slow",
        async setup() {
          await new Promise((r) => setTimeout(r, 5));
          order.push("slow");
        },
      },
      { name: "fast", setup: () => void order.push("fast") },
    ]);
    expect(order).toEqual(["slow", "fast"]);
  });

  it("a setup that throws or rejects is reported, unwound, and does not stop the others", async () => {
    const errors: ExtensionEvent[] = [];
    const kernel = createExtensionKernel({ onError: (e) => void errors.push(e), secrets: ["hunter2"] });
    const loaded = await kernel.load([
      {
        name: "throws",
        setup(api) {
          api.registerTool({ name: "partial" });
          api.use("tool_call", () => undefined);
          throw new Error("setup failed with hunter2");
        },
      },
      {
        name: "rejects",
        async setup() {
          throw "a string";
        },
      },
      { name: "ok", setup: (api) => api.registerTool(echo) },
    ]);
    expect(loaded.map((l) => l.name)).toEqual(["ok"]);
    expect(errors).toEqual([
      { type: "extension_error", extension: "throws", error: { name: "Error", message: "setup failed with [REDACTED]" } },
      { type: "extension_error", extension: "rejects", error: { message: "a string" } },
    ]);
    expect(kernel.contributions.tools.get("partial")).toBeUndefined();
    expect(kernel.middleware.list("tool_call")).toEqual([]);
    expect(kernel.contributions.tools.list()).toEqual([echo]);
  });

  it("reports setup errors through kernel.events too", async () => {
    const kernel = createExtensionKernel();
    const seen: ExtensionEvent[] = [];
    kernel.events.on("extension_error", (e) => void seen.push(e));
    await kernel.load([
      {
        name: "bad",
        setup() {
          throw new Error("x");
        },
      },
    ]);
    expect(seen.map((e) => e.extension)).toEqual(["bad"]);
  });

  it("errorPolicy throw makes load reject with the setup's error", async () => {
    const error = new Error("fatal");
    const kernel = createExtensionKernel({ errorPolicy: "throw" });
    await expect(
      kernel.load([
        {
          name: "bad",
          setup() {
            throw error;
          },
        },
      ]),
    ).rejects.toBe(error);
  });

  it("malformed extensions are reported by name or position", async () => {
    const errors: ExtensionEvent[] = [];
    const kernel = createExtensionKernel({ onError: (e) => void errors.push(e) });
    const loaded = await kernel.load([null, { name: "nosetup" }, 5, { name: "ok", setup() {} }] as never);
    expect(loaded.map((l) => l.name)).toEqual(["ok"]);
    expect(errors.map((e) => [e.extension, e.error?.code])).toEqual([
      ["#0", "ERR_INVALID_ARG_TYPE"],
      ["nosetup", "ERR_INVALID_ARG_TYPE"],
      ["#2", "ERR_INVALID_ARG_TYPE"],
    ]);
    await expect(kernel.load("nope" as never)).rejects.toThrow(TypeError);
  });

  it("a registerTool with a bad tool fails that setup", async () => {
    const errors: ExtensionEvent[] = [];
    const kernel = createExtensionKernel({ onError: (e) => void errors.push(e) });
    await kernel.load([{ name: "bad-tool", setup: (api) => api.registerTool({} as never) }]);
    expect(errors[0]).toMatchObject({ extension: "bad-tool", error: { name: "TypeError" } });
  });

  it("middleware errors reach the kernel's onError as middleware:<hook>", async () => {
    const errors: ExtensionEvent[] = [];
    const kernel = createExtensionKernel({ onError: (e) => void errors.push(e) });
    await kernel.load([
      {
        name: "mw",
        setup: (api) =>
          void api.use("tool_call", () => {
            throw new Error("mw failed");
          }),
      },
    ]);
    const call = { id: "1" };
    expect(await kernel.middleware.run("tool_call", call)).toBe(call);
    expect(errors).toEqual([{ type: "extension_error", extension: "middleware:tool_call", error: { name: "Error", message: "mw failed" } }]);
  });

  it("dispose removes exactly what the extension registered", async () => {
    const kernel = createExtensionKernel();
    const other = { name: "echo", other: true };
    const [loaded] = await kernel.load([{ name: "a", setup: (api) => api.registerTool(echo) }]);
    kernel.contributions.tools.register("echo", other);
    loaded!.dispose();
    loaded!.dispose();
    expect(kernel.contributions.tools.get("echo")).toBe(other);
  });

  it("permission and load policies refuse before setup runs", async () => {
    const errors: ExtensionEvent[] = [];
    let ran = 0;
    const kernel = createExtensionKernel({
      onError: (e) => void errors.push(e),
      permission: createStaticPermissionPolicy({ deny: ["blocked"] }),
      loadPolicy: { allowList: ["blocked", "ok"] },
    });
    const loaded = await kernel.load([
      { name: "blocked", setup: () => void ran++ },
      { name: "stranger", setup: () => void ran++ },
      { name: "ok", setup: () => void ran++ },
    ]);
    expect(ran).toBe(1);
    expect(loaded.map((l) => l.name)).toEqual(["ok"]);
    expect(errors.map((e) => e.error)).toEqual([
      { name: "PermissionDeniedError", message: "Permission denied: extension:blocked:setup", code: "ERR_PRISM_PERMISSION_DENIED" },
      { name: "Error", message: 'Extension "stranger" is not allow-listed', code: "ERR_PRISM_EXTENSION_REJECTED" },
    ]);
  });

  it("uses a given middleware registry and registries", async () => {
    const middleware = createMiddlewareRegistry();
    const registries = createContributionRegistries();
    const kernel = createExtensionKernel({ middleware, registries });
    expect(kernel.middleware).toBe(middleware);
    expect(kernel.contributions).toBe(registries);
  });

  it("validates its options", () => {
    expect(() => createExtensionKernel({ errorPolicy: "nope" as never })).toThrow('errorPolicy must be "event" or "throw"');
    expect(() => createExtensionKernel({ onError: 3 as never })).toThrow(TypeError);
  });
});
