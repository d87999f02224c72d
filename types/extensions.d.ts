// Contribution registries and the extension kernel.
import type { ExtensionEvent, Middleware, MiddlewareHookName, MiddlewareRegistry } from "./middleware"
import type { PermissionPolicy } from "./policy"

import type { ToolDefinition } from "./harness"

/** What an extension contributes as a tool: a tool definition (stored as given, never called). */
export type ToolContribution = ToolDefinition<any>

/**
 * Inert named storage. `register` replaces an existing name in place (first-registration order is kept);
 * `get` returns the very object stored or `undefined`; `resolve` throws `Error` `Unknown <label>: <name>`
 * (`code` `ERR_PRISM_UNKNOWN_CONTRIBUTION`); a non-string name or a non-object contribution throws
 * `TypeError` (`ERR_INVALID_ARG_TYPE`).
 */
export declare class ContributionRegistry<T = unknown> {
  /**
   * `label` names the kind in messages; `"contribution"` by default. `duplicate: "error"` makes a
   * second registration of a name throw `Duplicate <label>: <name>` (`ERR_PRISM_DUPLICATE_CONTRIBUTION`).
   */
  constructor(options?: string | ContributionRegistryOptions)
  register(name: string, contribution: T): void
  get(name: string): T | undefined
  resolve(name: string): T
  list(): T[]
  /** Removes `name`; `true` when something was removed. */
  unregister(name: string): boolean
}

export interface ContributionRegistryOptions {
  /** Names the kind in messages; `"contribution"` by default. */
  readonly label?: string
  /** `"replace"` (default) replaces in place; `"error"` throws `Duplicate <label>: <name>`. */
  readonly duplicate?: "replace" | "error"
}

/** A contribution registry as a plain object (its methods work detached and survive a spread). */
export declare function createContributionRegistry<T = unknown>(options?: ContributionRegistryOptions): ContributionRegistry<T>

/** A provider contribution: stored by `id`, never called by this package. */
export interface ProviderContribution {
  readonly id: string
  readonly [key: string]: unknown
}

/** A model configuration contribution, stored by `(provider, model)`. */
export interface ModelContribution {
  readonly provider: string
  readonly model: string
  readonly [key: string]: unknown
}

export interface ProviderContributionRegistry<T extends ProviderContribution = ProviderContribution> {
  register(provider: T): void
  unregister(id: string): boolean
  get(id: string): T | undefined
  /** By id or by a model's `provider`; throws `Unknown provider: <id>`. */
  resolve(model: string | { readonly provider: string }): T
  list(): T[]
}

export interface ModelContributionRegistry<T extends ModelContribution = ModelContribution> {
  register(model: T): void
  unregister(provider: string, model: string): boolean
  get(provider: string, model: string): T | undefined
  /** Throws `Unknown model: <provider>/<model>`. */
  resolve(provider: string, model: string): T
  list(): T[]
}

/** A named contribution (skills, commands, agents, builders, policies, …). */
export interface NamedContribution {
  readonly name: string
  readonly [key: string]: unknown
}

/** The twenty registries of `@arnilo/prism`; messages name the kind (`Unknown skill: <name>`). */
export interface ContributionRegistries {
  readonly providers: ProviderContributionRegistry
  readonly models: ModelContributionRegistry
  /** Tool definitions; `resolve` throws `Unknown tool: <name>`. */
  readonly tools: ContributionRegistry<ToolContribution>
  readonly contextProviders: ContributionRegistry<any>
  readonly skills: ContributionRegistry<any>
  readonly commands: ContributionRegistry<any>
  readonly agents: ContributionRegistry<any>
  readonly inputBuilders: ContributionRegistry<any>
  readonly promptBuilders: ContributionRegistry<any>
  readonly compactionStrategies: ContributionRegistry<any>
  readonly retryPolicies: ContributionRegistry<any>
  readonly storeFactories: ContributionRegistry<any>
  readonly resourceLoaders: ContributionRegistry<any>
  readonly settingsProviders: ContributionRegistry<any>
  readonly credentialResolvers: ContributionRegistry<any>
  readonly providerPackages: ContributionRegistry<any>
  /** Keyed `<provider>\0<name ?? kind>`. */
  readonly authMethods: ContributionRegistry<any>
  readonly providerRequestPolicies: ContributionRegistry<any>
  /** Keyed by the contribution's `id`. */
  readonly systemPromptContributions: ContributionRegistry<any>
  readonly instructionInjectors: ContributionRegistry<any>
}

/** Creates the twenty registries. Nothing stored is registered into a `ToolRegistry` or run by this package. */
export declare function createContributionRegistries(options?: {
  readonly duplicate?: "replace" | "error"
}): ContributionRegistries

/** A contribution found by discovery (a package's manifest), as `@arnilo/prism` describes it. */
export interface DiscoveredContribution {
  readonly kind: "skill" | "tool" | "context" | "instructions" | (string & {})
  readonly name: string
  readonly origin?: string
  readonly path?: string
  readonly skill?: { readonly name: string; readonly [key: string]: unknown }
  readonly declaration?: { readonly module?: string; readonly exportName?: string; readonly resource?: string }
}

/**
 * Registers discovered contributions: a skill as given; a tool, context provider or instructions as an
 * inert descriptor whose execution is the host's (calling it throws `… requires host execution …`).
 * Imports nothing; last write wins per kind and name.
 */
export declare function registerDiscoveredContributions(
  registries: ContributionRegistries,
  contributions: readonly DiscoveredContribution[],
): void

export type ExtensionEventHandler = (event: ExtensionEvent) => void | Promise<void>

export interface ExtensionEventBus {
  on(type: string, handler: ExtensionEventHandler): () => void
  /** Calls the handlers of `event.type` in order, awaiting each. */
  emit(event: ExtensionEvent): Promise<void>
}

/** Creates the event bus the kernel uses; exported for hosts that build their own kernel. */
export declare function createExtensionEventBus(options?: {
  readonly errorPolicy?: "event" | "throw"
  readonly secrets?: readonly (string | undefined)[]
}): ExtensionEventBus

/** What `setup` receives. Every registration made through it is undone if `setup` fails or on `dispose`. */
export interface ExtensionAPI {
  /** The extension's name. */
  readonly name: string
  readonly registries: ContributionRegistries
  /** The same object as `registries`. */
  readonly contributions: ContributionRegistries
  readonly middleware: MiddlewareRegistry
  on(type: string, handler: ExtensionEventHandler): () => void
  emit(event: ExtensionEvent): Promise<void>
  use<T>(hook: MiddlewareHookName | string, middleware: Middleware<T>): () => void
  /** Stores `tool` in `contributions.tools` under `tool.name`. It stays inert until the host registers it. */
  registerTool(tool: ToolContribution): void
  registerProvider(provider: ProviderContribution): void
  registerModel(model: ModelContribution): void
  registerContextProvider(provider: NamedContribution): void
  registerSkill(skill: NamedContribution): void
  registerCommand(command: NamedContribution): void
  registerAgent(agent: NamedContribution): void
  registerInputBuilder(builder: NamedContribution): void
  registerPromptBuilder(builder: NamedContribution): void
  registerCompactionStrategy(strategy: NamedContribution): void
  registerRetryPolicy(policy: NamedContribution): void
  registerStoreFactory(factory: NamedContribution): void
  registerResourceLoader(key: string, loader: object): void
  registerSettingsProvider(key: string, provider: object): void
  registerCredentialResolver(key: string, resolver: object): void
  registerProviderPackage(providerPackage: NamedContribution): void
  /** Keyed `<provider>\0<name ?? kind>`. */
  registerAuthMethod(method: { readonly provider: string; readonly name?: string; readonly kind?: string }): void
  registerProviderRequestPolicy(policy: NamedContribution): void
  /** Keyed by `id`. */
  registerSystemPromptContribution(contribution: { readonly id: string; readonly [key: string]: unknown }): void
  registerInstructionInjector(injector: NamedContribution): void
}

export interface Extension {
  readonly name: string
  readonly signature?: unknown
  setup(api: ExtensionAPI): void | Promise<void>
}

export interface ExtensionLoadPolicy {
  /** When set, only listed extension names may load. */
  readonly allowList?: readonly string[]
  /** Return false or throw to refuse; when set, an extension without `signature` is refused. */
  readonly verifySignature?: (extension: Extension) => boolean | Promise<boolean>
}

export interface ExtensionKernelOptions {
  readonly registries?: ContributionRegistries
  readonly middleware?: MiddlewareRegistry
  /** `"event"` (default): a failed setup is reported and loading goes on. `"throw"`: `load` rejects with it. */
  readonly errorPolicy?: "event" | "throw"
  readonly secrets?: readonly (string | undefined)[]
  /** Checked with `{ kind: "extension", action: "setup", target: name }` before each setup. */
  readonly permission?: PermissionPolicy
  readonly loadPolicy?: ExtensionLoadPolicy
  /** Subscribed to `extension_error` events (failed setups and middleware errors). */
  readonly onError?: ExtensionEventHandler
}

export interface LoadedExtension {
  readonly name: string
  /** Removes what this extension registered (tools, middlewares, event handlers). Idempotent. */
  dispose(): void
}

export interface ExtensionKernel {
  readonly registries: ContributionRegistries
  /** The same object as `registries`. */
  readonly contributions: ContributionRegistries
  readonly middleware: MiddlewareRegistry
  readonly events: ExtensionEventBus
  /**
   * Runs each extension's `setup(api)` in order, awaiting async ones. A setup that throws or rejects
   * (or is refused by `permission` / `loadPolicy`, or is not `{ name, setup }`) has its registrations
   * undone and is reported as `{ type: "extension_error", extension: <name>, error }` (`#<index>` when
   * it has no name); the others still load. Resolves to the extensions that loaded.
   */
  load(extensions: readonly Extension[]): Promise<LoadedExtension[]>
}

export declare function createExtensionKernel(options?: ExtensionKernelOptions): ExtensionKernel
