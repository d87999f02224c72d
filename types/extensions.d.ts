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
  /** `label` names the kind in messages; `"contribution"` by default. */
  constructor(label?: string)
  register(name: string, contribution: T): void
  get(name: string): T | undefined
  resolve(name: string): T
  list(): T[]
  /** Removes `name`; `true` when something was removed. */
  unregister(name: string): boolean
}

export interface ContributionRegistries {
  /** Tool definitions; `resolve` throws `Unknown tool: <name>`. */
  readonly tools: ContributionRegistry<ToolContribution>
}

/** Creates `{ tools }`. Nothing stored is registered into a `ToolRegistry` or dispatched by this package. */
export declare function createContributionRegistries(): ContributionRegistries

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
