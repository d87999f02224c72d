import { describe, expect, it } from "vitest";
import {
  createContributionRegistries,
  createContributionRegistry,
  createExtensionKernel,
  registerDiscoveredContributions,
  type ExtensionEvent,
} from "../index.js";

const KINDS = [
  "providers", "models", "tools", "contextProviders", "skills", "commands", "agents", "inputBuilders",
  "promptBuilders", "compactionStrategies", "retryPolicies", "storeFactories", "resourceLoaders",
  "settingsProviders", "credentialResolvers", "providerPackages", "authMethods", "providerRequestPolicies",
  "systemPromptContributions", "instructionInjectors",
];

describe("createContributionRegistries", () => {
  it("has upstream's twenty kinds, each empty and independent", () => {
    const r = createContributionRegistries();
    expect(Object.keys(r).sort()).toEqual([...KINDS].sort());
    for (const kind of KINDS) expect((r as any)[kind].list()).toEqual([]);
    r.skills.register("brief", { name: "brief" });
    expect(r.commands.list()).toEqual([]);
    expect(() => r.commands.resolve("brief")).toThrow("Unknown command: brief");
    expect(() => r.compactionStrategies.resolve("x")).toThrow("Unknown compaction strategy: x");
  });

  it("providers are keyed by id and resolve by id or by a model's provider", () => {
    const r = createContributionRegistries();
    const provider = { id: "mock", generate() {} };
    r.providers.register(provider);
    expect(r.providers.get("mock")).toBe(provider);
    expect(r.providers.resolve("mock")).toBe(provider);
    expect(r.providers.resolve({ provider: "mock" })).toBe(provider);
    expect(() => r.providers.resolve("nope")).toThrow("Unknown provider: nope");
    expect(() => r.providers.register({} as never)).toThrow("A provider must be an object with a string id");
    expect(r.providers.unregister("mock")).toBe(true);
    expect(r.providers.get("mock")).toBeUndefined();
  });

  it("models are keyed by provider and model", () => {
    const r = createContributionRegistries();
    const demo = { provider: "mock", model: "demo" };
    r.models.register(demo);
    expect(r.models.resolve("mock", "demo")).toBe(demo);
    expect(r.models.get("mock", "other")).toBeUndefined();
    expect(() => r.models.resolve("mock", "other")).toThrow("Unknown model: mock/other");
  });

  it("strict bundles refuse a second registration of a key, with a code", () => {
    const r = createContributionRegistries({ duplicate: "error" });
    r.providers.register({ id: "p" });
    expect(() => r.providers.register({ id: "p" })).toThrow("Duplicate provider: p");
    r.models.register({ provider: "p", model: "m" });
    expect(() => r.models.register({ provider: "p", model: "m" })).toThrow("Duplicate model: p/m");
    r.skills.register("s", { name: "s" });
    let caught: any;
    try {
      r.skills.register("s", { name: "s" });
    } catch (e) {
      caught = e;
    }
    expect(caught.message).toBe("Duplicate skill: s");
    expect(caught.code).toBe("ERR_PRISM_DUPLICATE_CONTRIBUTION");
    expect(() => createContributionRegistries({ duplicate: "ignore" as never })).toThrow('options.duplicate must be "replace" or "error"');
  });
});

describe("createContributionRegistry", () => {
  it("labels messages and keeps working detached or spread", () => {
    const r = createContributionRegistry<{ name: string }>({ label: "widget" });
    const { register, get } = r;
    const w = { name: "w" };
    register("w", w);
    expect(get("w")).toBe(w);
    expect({ ...r }.resolve("w")).toBe(w);
    expect(() => r.resolve("x")).toThrow("Unknown widget: x");
    expect(() => createContributionRegistry().resolve("x")).toThrow("Unknown contribution: x");
    expect(() => createContributionRegistry("x" as never)).toThrow("options must be an object");
  });
});

describe("extension API", () => {
  it("an extension registering a provider, a model and every named kind loads, and dispose undoes it", async () => {
    const errors: ExtensionEvent[] = [];
    const kernel = createExtensionKernel({ onError: (e) => void errors.push(e) });
    const provider = { id: "mock", generate() {} };
    const [loaded] = await kernel.load([
      {
        name: "all",
        setup(api) {
          api.registerProvider(provider);
          api.registerModel({ provider: "mock", model: "demo" });
          api.registerSkill({ name: "brief" });
          api.registerCommand({ name: "say" });
          api.registerAgent({ name: "agent" });
          api.registerContextProvider({ name: "ctx" });
          api.registerInputBuilder({ name: "input" });
          api.registerPromptBuilder({ name: "prompt" });
          api.registerCompactionStrategy({ name: "compact" });
          api.registerRetryPolicy({ name: "retry" });
          api.registerStoreFactory({ name: "memory" });
          api.registerResourceLoader("memory", { load: async () => ({ text: "resource" }) });
          api.registerSettingsProvider("settings", { get: () => undefined });
          api.registerCredentialResolver("credentials", { resolve: () => undefined });
          api.registerProviderPackage({ name: "pkg" });
          api.registerAuthMethod({ provider: "mock", kind: "api_key" });
          api.registerProviderRequestPolicy({ name: "cache" });
          api.registerSystemPromptContribution({ id: "demo-prompt", text: "Be brief." });
          api.registerInstructionInjector({ name: "json" });
        },
      },
    ]);
    expect(errors).toEqual([]);
    const r = kernel.registries;
    expect(r.providers.resolve("mock")).toBe(provider);
    expect(r.models.resolve("mock", "demo").model).toBe("demo");
    expect(r.authMethods.resolve("mock\0api_key").provider).toBe("mock");
    expect(r.systemPromptContributions.resolve("demo-prompt").text).toBe("Be brief.");
    expect(r.instructionInjectors.resolve("json").name).toBe("json");
    expect(r.tools.list()).toEqual([]);
    loaded!.dispose();
    for (const kind of KINDS) expect((r as any)[kind].list()).toEqual([]);
  });

  it("a provider without an id fails only that setup, leaving nothing behind", async () => {
    const errors: ExtensionEvent[] = [];
    const kernel = createExtensionKernel({ onError: (e) => void errors.push(e) });
    const loaded = await kernel.load([
      {
        name: "bad",
        setup(api) {
          api.registerSkill({ name: "half" });
          api.registerProvider({} as never);
        },
      },
    ]);
    expect(loaded).toEqual([]);
    expect(kernel.registries.skills.list()).toEqual([]);
    expect((errors[0] as any).error.message).toBe("A provider must be an object with a string id");
  });
});

describe("registerDiscoveredContributions", () => {
  it("registers skills as given and the rest as inert descriptors, idempotently", () => {
    const r = createContributionRegistries();
    const skill = { name: "brief", text: "…" };
    const found = [
      { kind: "skill", name: "brief", skill },
      { kind: "tool", name: "grep", origin: "workspace", path: "/p" },
      { kind: "context", name: "repo" },
      { kind: "instructions", name: "style", origin: "package", path: "/q", declaration: { resource: "style.md" } },
      { kind: "unknown-kind", name: "x" },
    ];
    registerDiscoveredContributions(r, found);
    registerDiscoveredContributions(r, found);
    expect(r.skills.resolve("brief")).toBe(skill);
    const tool = r.tools.resolve("grep") as any;
    expect(tool.description).toBe("Discovered tool grep; host-owned execution");
    expect(() => tool.execute()).toThrow("Discovered tool grep requires host execution (declaration.module not loaded)");
    expect(() => (r.contextProviders.resolve("repo") as any).resolve()).toThrow("Discovered context provider repo requires host execution");
    expect(r.systemPromptContributions.resolve("style")).toEqual({
      id: "style",
      source: "package",
      mode: "append",
      text: "",
      metadata: { discovered: true, origin: "package", path: "/q", resource: "style.md" },
    });
    expect(r.tools.list()).toHaveLength(1);
    expect(() => registerDiscoveredContributions(r, null as never)).toThrow("contributions must be an array");
  });
});
