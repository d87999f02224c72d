'use strict'
// `createToolRegistry` and `filterTools`, in JS on purpose: a registry is a Map of host objects and a
// filter is a few Set lookups per tool. A crossing into Rust costs more than the whole work
// (bench/RESULTS.md, "Registry and filters"), so the data stays where it lives. `get` returns the very
// object registered; the methods are closures, so they keep working when detached.

const { codedError } = require('./errors.js')
const { checkToolContract } = require('./tool-contract.js')

function parseDuplicate(options) {
  if (options === undefined || options === null) return false
  if (typeof options !== 'object') {
    throw codedError(TypeError, 'createToolRegistry: options must be an object', 'ERR_PRISM_INVALID_OPTION')
  }
  const duplicate = options.duplicate
  if (duplicate === undefined || duplicate === 'replace') return false
  if (duplicate === 'error') return true
  throw codedError(
    TypeError,
    'createToolRegistry: options.duplicate must be "replace" or "error"',
    'ERR_PRISM_INVALID_OPTION',
  )
}

function toolName(tool) {
  if (typeof tool !== 'object' || tool === null) {
    throw codedError(TypeError, 'Tool definition must be an object', 'ERR_PRISM_INVALID_TOOL')
  }
  const name = tool.name
  if (typeof name !== 'string' || name.length === 0) {
    throw codedError(TypeError, 'Tool definition must have a non-empty string name', 'ERR_PRISM_INVALID_TOOL')
  }
  // `strict`, `inputExamples` and `deferLoading` are checked here, once (lib/tool-contract.js).
  checkToolContract(tool)
  return name
}

/**
 * A registry of tools by exact name. `duplicate: "replace"` (default) replaces in place, keeping the
 * first position in `list()`; `"error"` refuses a second registration with `Duplicate tool: <name>`.
 */
function createToolRegistry(tools, options) {
  const strict = parseDuplicate(options)
  const byName = new Map()
  function register(tool) {
    const name = toolName(tool)
    if (strict && byName.has(name)) {
      throw codedError(Error, `Duplicate tool: ${name}`, 'ERR_PRISM_DUPLICATE_TOOL')
    }
    byName.set(name, tool)
  }
  function get(name) {
    return byName.get(name)
  }
  function resolve(name) {
    const tool = typeof name === 'string' ? byName.get(name) : undefined
    if (tool === undefined) throw codedError(Error, `Unknown tool: ${String(name)}`, 'ERR_PRISM_UNKNOWN_TOOL')
    return tool
  }
  function list() {
    return [...byName.values()]
  }
  if (tools !== undefined && tools !== null) {
    if (!Array.isArray(tools)) {
      throw codedError(TypeError, 'createToolRegistry: tools must be an array of tool definitions', 'ERR_PRISM_INVALID_OPTION')
    }
    for (let i = 0; i < tools.length; i++) register(tools[i])
  }
  return { register, get, resolve, list, [PLAIN_GET]: get }
}

// Registries made here keep the `get` made here under a symbol (a copy of a registry keeps it, and
// is plain while its `get` is that one): a Map lookup, which runs no host code, cannot throw and
// answers at once, so dispatch may look a tool up before it begins (one crossing fewer). A symbol
// key, not a WeakMap: a WeakMap entry per registry cost a quarter of createToolRegistry's time in
// garbage collection.
const PLAIN_GET = Symbol('prism.plainGet')

/** The registry's `get` when it is one made by createToolRegistry and unchanged; else undefined. */
function plainLookup(registry) {
  const get = registry[PLAIN_GET]
  return get !== undefined && registry.get === get ? get : undefined
}

// ----- filters ------------------------------------------------------------------------------------

const NO_NAMES = []

function nameList(value, what) {
  if (value === undefined || value === null) return NO_NAMES
  if (!Array.isArray(value)) {
    throw codedError(TypeError, `${what} must be an array of tool names`, 'ERR_PRISM_INVALID_FILTER')
  }
  // A copy made while checking: each item is read once, so what was checked is what is used (an
  // accessor or a Proxy could answer a second read differently).
  const n = value.length
  const names = new Array(n)
  for (let i = 0; i < n; i++) {
    const name = value[i]
    if (typeof name !== 'string') {
      throw codedError(TypeError, `${what} must contain only strings`, 'ERR_PRISM_INVALID_FILTER')
    }
    names[i] = name
  }
  return names
}

function checkRule(rule) {
  if (typeof rule !== 'object' || rule === null || Array.isArray(rule)) {
    throw codedError(TypeError, 'A tool filter must be an object { allow?, deny? }', 'ERR_PRISM_INVALID_FILTER')
  }
  return [nameList(rule.allow, 'filter.allow'), nameList(rule.deny, 'filter.deny')]
}

// The last filter compiled, with the name lists it was made from (the checked copies): a caller that
// passes the same filter at every turn (its lists compared item by item, so a list changed in place
// is seen) reuses its sets instead of building them again.
let lastFilter = { lists: [], compiled: { allows: [], deny: undefined } }

/**
 * `ToolFilter | ToolFilter[] | undefined` as `{ allows, deny }`: a tool survives when `deny` does not
 * hold its exact name and every set in `allows` does. An empty or missing allow is no restriction.
 * Throws `ERR_PRISM_INVALID_FILTER` for anything that is not that shape.
 */
function compileToolFilter(filter) {
  // Each rule's allow and deny, in order, every one read and checked once.
  const lists = []
  if (Array.isArray(filter)) {
    for (let i = 0; i < filter.length; i++) {
      const [allow, deny] = checkRule(filter[i])
      lists.push(allow, deny)
    }
  } else if (filter !== undefined && filter !== null) {
    const [allow, deny] = checkRule(filter)
    lists.push(allow, deny)
  }
  const last = lastFilter
  if (sameLists(lists, last.lists)) return last.compiled
  const allows = []
  let deny
  for (let i = 0; i < lists.length; i += 2) {
    if (lists[i].length > 0) allows.push(new Set(lists[i]))
    const denied = lists[i + 1]
    if (denied.length > 0) {
      deny ??= new Set()
      for (let j = 0; j < denied.length; j++) deny.add(denied[j])
    }
  }
  const compiled = { allows, deny }
  lastFilter = { lists, compiled }
  return compiled
}

/** Whether two lists (or two `undefined`) hold the same items in the same order. */
function sameItems(a, b) {
  if (a === undefined || b === undefined) return a === b
  const n = a.length
  if (n !== b.length) return false
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return false
  return true
}

function sameLists(a, b) {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (!sameItems(a[i], b[i])) return false
  return true
}

function permits(compiled, name) {
  if (compiled.deny !== undefined && compiled.deny.has(name)) return false
  const allows = compiled.allows
  for (let i = 0; i < allows.length; i++) if (!allows[i].has(name)) return false
  return true
}

/** The tools that survive `filter`, as a new array in input order; never anything outside `tools`. */
function filterTools(tools, filter) {
  if (!Array.isArray(tools)) {
    throw codedError(TypeError, 'filterTools: tools must be an array of tool definitions', 'ERR_PRISM_INVALID_OPTION')
  }
  const compiled = compileToolFilter(filter)
  const out = []
  for (let i = 0; i < tools.length; i++) {
    const tool = tools[i]
    if (typeof tool !== 'object' || tool === null) continue
    const name = tool.name
    if (typeof name === 'string' && permits(compiled, name)) out.push(tool)
  }
  return out
}

module.exports = { createToolRegistry, filterTools, compileToolFilter, plainLookup, sameItems }
