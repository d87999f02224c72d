'use strict'
// Contribution registries: inert, named storage of what extensions contribute (providers, models,
// tools, skills, …). Plain `Map`s in JS, like the tool registry: a lookup is cheaper than a crossing.
// Nothing stored here is registered into a ToolRegistry or run until the host does it.

const { codedError } = require('./errors.js')

const CODE_INVALID_ARG = 'ERR_INVALID_ARG_TYPE'
const CODE_UNKNOWN = 'ERR_PRISM_UNKNOWN_CONTRIBUTION'
const CODE_DUPLICATE = 'ERR_PRISM_DUPLICATE_CONTRIBUTION'

function strictOf(duplicate, factory) {
  if (duplicate === undefined || duplicate === 'replace') return false
  if (duplicate === 'error') return true
  throw codedError(TypeError, `${factory}: options.duplicate must be "replace" or "error"`, 'ERR_PRISM_INVALID_OPTION')
}

function optionsOf(options, factory) {
  if (options === undefined || options === null) return {}
  if (typeof options !== 'object') {
    throw codedError(TypeError, `${factory}: options must be an object`, 'ERR_PRISM_INVALID_OPTION')
  }
  return options
}

/**
 * A Map in first registration order with the errors every registry gives: `Duplicate <label>: <shown>`
 * when `strict`, `Unknown <label>: <shown>`. `shown` is how a message names the key (the key itself
 * unless told).
 */
function keyedMap(label, strict) {
  const byKey = new Map()
  return {
    byKey,
    add(key, value, shown = key) {
      if (strict && byKey.has(key)) throw codedError(Error, `Duplicate ${label}: ${shown}`, CODE_DUPLICATE)
      byKey.set(key, value)
    },
    resolve(key, shown = key) {
      const value = byKey.get(key)
      if (value === undefined) throw codedError(Error, `Unknown ${label}: ${shown}`, CODE_UNKNOWN)
      return value
    },
    list() {
      return [...byKey.values()]
    },
  }
}

function contributionName(label, key) {
  if (typeof key !== 'string') throw codedError(TypeError, `A ${label} contribution name must be a string`, CODE_INVALID_ARG)
  return key
}

// The methods of one registry, as closures (they keep working detached or spread).
function contributionMethods(label, strict) {
  const map = keyedMap(label, strict)
  return {
    register(key, contribution) {
      contributionName(label, key)
      if (contribution === null || (typeof contribution !== 'object' && typeof contribution !== 'function')) {
        throw codedError(TypeError, `The ${label} contribution "${key}" must be an object`, CODE_INVALID_ARG)
      }
      map.add(key, contribution)
    },
    unregister: (key) => map.byKey.delete(key),
    get: (key) => map.byKey.get(key),
    resolve: (key) => map.resolve(contributionName(label, key)),
    list: map.list,
  }
}

/**
 * A named store of contributions in first registration order; registering a key again replaces
 * the value in place, or throws `Duplicate <label>: <key>` with `duplicate: "error"`.
 * `new ContributionRegistry("skill")` and `new ContributionRegistry({ label, duplicate })` both work.
 */
class ContributionRegistry {
  constructor(options) {
    const opts = typeof options === 'string' ? { label: options } : optionsOf(options, 'ContributionRegistry')
    const label = opts.label ?? 'contribution'
    if (typeof label !== 'string') {
      throw codedError(TypeError, 'ContributionRegistry: options.label must be a string', 'ERR_PRISM_INVALID_OPTION')
    }
    Object.assign(this, contributionMethods(label, strictOf(opts.duplicate, 'ContributionRegistry')))
  }
}

/** `createContributionRegistry({ label?, duplicate? })`: a registry as a plain object. */
function createContributionRegistry(options) {
  const opts = optionsOf(options, 'createContributionRegistry')
  return { ...new ContributionRegistry(opts) }
}

function objectWith(value, what, key) {
  if (value === null || typeof value !== 'object') {
    throw codedError(TypeError, `A ${what} must be an object with a string ${key}`, CODE_INVALID_ARG)
  }
  if (typeof value[key] !== 'string') {
    throw codedError(TypeError, `A ${what} must be an object with a string ${key}`, CODE_INVALID_ARG)
  }
  return value[key]
}

/** Providers by `id`; `resolve` takes an id or a model `{ provider }`. */
function createProviderRegistry(strict) {
  const map = keyedMap('provider', strict)
  return {
    register(provider) {
      map.add(objectWith(provider, 'provider', 'id'), provider)
    },
    unregister: (id) => map.byKey.delete(id),
    get: (id) => map.byKey.get(id),
    resolve: (model) => map.resolve(typeof model === 'string' ? model : model?.provider),
    list: map.list,
  }
}

/** Model configurations by `(provider, model)`. */
function createModelRegistry(strict) {
  const map = keyedMap('model', strict)
  const key = (provider, model) => `${provider}\0${model}`
  return {
    register(model) {
      if (model === null || typeof model !== 'object' || typeof model.provider !== 'string' || typeof model.model !== 'string') {
        throw codedError(TypeError, 'A model must be an object with string provider and model', CODE_INVALID_ARG)
      }
      map.add(key(model.provider, model.model), model, `${model.provider}/${model.model}`)
    },
    unregister: (provider, model) => map.byKey.delete(key(provider, model)),
    get: (provider, model) => map.byKey.get(key(provider, model)),
    resolve: (provider, model) => map.resolve(key(provider, model), `${provider}/${model}`),
    list: map.list,
  }
}

// Every kind keyed by a name, with the label its messages use.
const NAMED_KINDS = [
  ['tools', 'tool'],
  ['contextProviders', 'context provider'],
  ['skills', 'skill'],
  ['commands', 'command'],
  ['agents', 'agent'],
  ['inputBuilders', 'input builder'],
  ['promptBuilders', 'prompt builder'],
  ['compactionStrategies', 'compaction strategy'],
  ['retryPolicies', 'retry policy'],
  ['storeFactories', 'store factory'],
  ['resourceLoaders', 'resource loader'],
  ['settingsProviders', 'settings provider'],
  ['credentialResolvers', 'credential resolver'],
  ['providerPackages', 'provider package'],
  ['authMethods', 'auth method'],
  ['providerRequestPolicies', 'provider request policy'],
  ['systemPromptContributions', 'system prompt contribution'],
  ['instructionInjectors', 'instruction injector'],
]

/** The twenty registries of `@arnilo/prism`: `providers`, `models`, and one per named kind. */
function createContributionRegistries(options) {
  const opts = optionsOf(options, 'createContributionRegistries')
  const strict = strictOf(opts.duplicate, 'createContributionRegistries')
  const registries = { providers: createProviderRegistry(strict), models: createModelRegistry(strict) }
  for (const [kind, label] of NAMED_KINDS) registries[kind] = { ...new ContributionRegistry({ label, duplicate: opts.duplicate }) }
  return registries
}

/** The key an auth method is registered under: `<provider>\0<name ?? kind>`. */
function authMethodKey(method) {
  return `${method.provider}\0${method.name ?? method.kind}`
}

// ----- discovered contributions -----------------------------------------------------------------

function discoveryMetadata(contribution) {
  const declaration = contribution.declaration
  const out = { discovered: true, origin: contribution.origin, path: contribution.path }
  if (declaration?.module) out.module = declaration.module
  if (declaration?.exportName) out.exportName = declaration.exportName
  if (declaration?.resource) out.resource = declaration.resource
  return out
}

// Descriptor-only entries: discovery never imports code, so running one is the host's job.
function discoveredTool(name) {
  return {
    name,
    description: `Discovered tool ${name}; host-owned execution`,
    execute() {
      throw new Error(`Discovered tool ${name} requires host execution (declaration.module not loaded)`)
    },
  }
}

function discoveredContextProvider(name) {
  return {
    name,
    resolve() {
      throw new Error(`Discovered context provider ${name} requires host execution (declaration.module not loaded)`)
    },
  }
}

/**
 * Registers discovered contributions (skills as given; tools, context providers and instructions as
 * inert descriptors). Imports nothing; last write wins per kind and name, so a second call is a no-op.
 */
function registerDiscoveredContributions(registries, contributions) {
  if (contributions == null || typeof contributions[Symbol.iterator] !== 'function' || typeof contributions === 'string') {
    throw codedError(TypeError, 'registerDiscoveredContributions: contributions must be an array', CODE_INVALID_ARG)
  }
  for (const contribution of contributions) {
    if (contribution === null || typeof contribution !== 'object') continue
    switch (contribution.kind) {
      case 'skill':
        if (contribution.skill) registries.skills.register(contribution.skill.name, contribution.skill)
        break
      case 'tool':
        registries.tools.register(contribution.name, discoveredTool(contribution.name))
        break
      case 'context':
        registries.contextProviders.register(contribution.name, discoveredContextProvider(contribution.name))
        break
      case 'instructions':
        registries.systemPromptContributions.register(contribution.name, {
          id: contribution.name,
          source: 'package',
          mode: 'append',
          text: '',
          metadata: discoveryMetadata(contribution),
        })
        break
    }
  }
}

module.exports = {
  ContributionRegistry,
  createContributionRegistry,
  createContributionRegistries,
  registerDiscoveredContributions,
  authMethodKey,
  NAMED_KINDS,
}
