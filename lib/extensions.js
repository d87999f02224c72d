'use strict'
// The extension kernel: the await driver that runs each extension's `setup(api)` (sync or async) in
// order. The contribution registries are `lib/contributions.js`; the middleware registry is
// `lib/middleware.js`. Contributions stay inert: nothing here registers a tool into a ToolRegistry or
// dispatches anything.

const { PermissionDeniedError } = require('./errors.js')
const { createContributionRegistries, authMethodKey } = require('./contributions.js')
const { createMiddlewareRegistry, checkedErrorOptions, extensionError, codedError, describeType } = require('./middleware.js')

const CODE_INVALID_ARG = 'ERR_INVALID_ARG_TYPE'
const CODE_EXTENSION_REJECTED = 'ERR_PRISM_EXTENSION_REJECTED'

function createExtensionEventBus(options) {
  const opts = options ?? {}
  const errorPolicy = opts.errorPolicy ?? 'event'
  const secrets = opts.secrets
  const handlers = new Map()
  const bus = {
    on(type, handler) {
      if (typeof type !== 'string') {
        throw codedError(TypeError, `Event type must be a string, got ${describeType(type)}`, CODE_INVALID_ARG)
      }
      if (typeof handler !== 'function') {
        throw codedError(TypeError, `Event handler must be a function, got ${describeType(handler)}`, CODE_INVALID_ARG)
      }
      handlers.set(type, [...(handlers.get(type) ?? []), handler])
      let active = true
      return () => {
        if (!active) return
        active = false
        const rest = (handlers.get(type) ?? []).filter((item) => item !== handler)
        if (rest.length === 0) handlers.delete(type)
        else handlers.set(type, rest)
      }
    },
    async emit(event) {
      const type = event !== null && typeof event === 'object' ? event.type : undefined
      for (const handler of handlers.get(type) ?? []) {
        try {
          await handler(event)
        } catch (error) {
          if (errorPolicy === 'throw') throw error
          // A failing extension_error handler is not reported again (no loop).
          if (type !== 'extension_error') await bus.emit(extensionError(event.extension, error, secrets))
        }
      }
    },
  }
  return bus
}

async function assertLoadPolicy(policy, extension) {
  if (policy == null) return
  if (policy.allowList && !policy.allowList.includes(extension.name)) {
    throw codedError(Error, `Extension "${extension.name}" is not allow-listed`, CODE_EXTENSION_REJECTED)
  }
  if (typeof policy.verifySignature === 'function') {
    if (!extension.signature) throw codedError(Error, `Extension "${extension.name}" is unsigned`, CODE_EXTENSION_REJECTED)
    const ok = await policy.verifySignature(extension)
    if (!ok) {
      throw codedError(Error, `Extension "${extension.name}" failed signature verification`, CODE_EXTENSION_REJECTED)
    }
  }
}

// Registers `value` under `key` and records how to take it back out: only what this extension put
// there is removed, so a later registration of the same key by another extension survives.
function keyed(registry, key, value, track) {
  registry.register(key, value)
  track(() => {
    if (registry.get(key) === value) registry.unregister(key)
  })
}

function unwind(undo) {
  for (const fn of undo.reverse()) {
    try {
      fn()
    } catch {
      // Best effort: one stuck undo must not block the rest.
    }
  }
}

function createExtensionKernel(options) {
  const { opts, errorPolicy, onError } = checkedErrorOptions(options, 'Extension kernel')
  const secrets = opts.secrets
  const registries = opts.registries ?? createContributionRegistries()
  const events = createExtensionEventBus({ errorPolicy, secrets })
  if (onError !== undefined) events.on('extension_error', onError)
  const middleware = opts.middleware ?? createMiddlewareRegistry({ errorPolicy, secrets, onError: events.emit })

  const createApi = (name, track) => ({
    name,
    registries,
    contributions: registries,
    middleware,
    on(type, handler) {
      const off = events.on(type, handler)
      track(off)
      return off
    },
    emit: events.emit,
    use(hook, fn) {
      const off = middleware.use(hook, fn)
      track(off)
      return off
    },
    registerTool(tool) {
      if (tool === null || typeof tool !== 'object' || typeof tool.name !== 'string') {
        throw codedError(TypeError, `registerTool expects a tool definition with a string name, got ${describeType(tool)}`, CODE_INVALID_ARG)
      }
      keyed(registries.tools, tool.name, tool, track)
    },
    registerProvider(provider) {
      registries.providers.register(provider)
      // Only remove what this extension put there.
      track(() => {
        if (registries.providers.get(provider.id) === provider) registries.providers.unregister(provider.id)
      })
    },
    registerModel(model) {
      registries.models.register(model)
      track(() => {
        if (registries.models.get(model.provider, model.model) === model) registries.models.unregister(model.provider, model.model)
      })
    },
    registerContextProvider: (provider) => keyed(registries.contextProviders, provider?.name, provider, track),
    registerSkill: (skill) => keyed(registries.skills, skill?.name, skill, track),
    registerCommand: (command) => keyed(registries.commands, command?.name, command, track),
    registerAgent: (agent) => keyed(registries.agents, agent?.name, agent, track),
    registerInputBuilder: (builder) => keyed(registries.inputBuilders, builder?.name, builder, track),
    registerPromptBuilder: (builder) => keyed(registries.promptBuilders, builder?.name, builder, track),
    registerCompactionStrategy: (strategy) => keyed(registries.compactionStrategies, strategy?.name, strategy, track),
    registerRetryPolicy: (policy) => keyed(registries.retryPolicies, policy?.name, policy, track),
    registerStoreFactory: (factory) => keyed(registries.storeFactories, factory?.name, factory, track),
    registerResourceLoader: (key, loader) => keyed(registries.resourceLoaders, key, loader, track),
    registerSettingsProvider: (key, provider) => keyed(registries.settingsProviders, key, provider, track),
    registerCredentialResolver: (key, resolver) => keyed(registries.credentialResolvers, key, resolver, track),
    registerProviderPackage: (pkg) => keyed(registries.providerPackages, pkg?.name, pkg, track),
    registerAuthMethod: (method) =>
      keyed(registries.authMethods, method !== null && typeof method === 'object' ? authMethodKey(method) : undefined, method, track),
    registerProviderRequestPolicy: (policy) => keyed(registries.providerRequestPolicies, policy?.name, policy, track),
    registerSystemPromptContribution: (contribution) =>
      keyed(registries.systemPromptContributions, contribution?.id, contribution, track),
    registerInstructionInjector: (injector) => keyed(registries.instructionInjectors, injector?.name, injector, track),
  })

  async function load(extensions) {
    if (extensions == null || typeof extensions[Symbol.iterator] !== 'function' || typeof extensions === 'string') {
      throw codedError(TypeError, `load expects an array of extensions, got ${describeType(extensions)}`, CODE_INVALID_ARG)
    }
    const loaded = []
    let index = 0
    for (const extension of extensions) {
      const position = index++
      const name =
        extension !== null && typeof extension === 'object' && typeof extension.name === 'string'
          ? extension.name
          : `#${position}`
      const undo = []
      try {
        if (name === `#${position}` || typeof extension.setup !== 'function') {
          throw codedError(TypeError, `Extension ${name} must be an object { name: string, setup(api) }`, CODE_INVALID_ARG)
        }
        if (opts.permission != null) {
          const request = { kind: 'extension', action: 'setup', target: name }
          const decision = await opts.permission.check(request)
          if (!decision || decision.allowed !== true) throw new PermissionDeniedError(request, decision ?? {})
        }
        await assertLoadPolicy(opts.loadPolicy, extension)
        await extension.setup(createApi(name, (fn) => undo.push(fn)))
      } catch (error) {
        // A failed setup leaves no partial contributions behind.
        unwind(undo)
        if (errorPolicy === 'throw') throw error
        await events.emit(extensionError(name, error, secrets))
        continue
      }
      let disposed = false
      loaded.push({
        name,
        dispose() {
          if (disposed) return
          disposed = true
          unwind(undo)
        },
      })
    }
    return loaded
  }

  return { registries, contributions: registries, middleware, events, load }
}

module.exports = { createExtensionKernel, createExtensionEventBus }
