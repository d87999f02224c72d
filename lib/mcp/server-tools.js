'use strict'
// What an MCP client sees of a served registry: the `tools/list` entry of each tool (its schema checked
// against the listing bounds once per tool object), and the `CallToolResult` a `ToolResult` becomes
// (redacted, bounded by `maxResultBytes`).
const { measureBoundedJson, boundedJson, truncateUtf8, utf8Bytes } = require('./json-bounds.js')
const { SCHEMA_BOUNDS, serverError } = require('./server-limits.js')
const { outputSchemaMismatch } = require('../output-schema.js')
const { mediaTypeOf, dataUrl, resourceLinkBlock } = require('../tool-result-content.js')

const listedCache = new WeakMap()

/** Hints from a declared effect; a classifier function gives none (it depends on the arguments). */
function effectHints(tool) {
  const effect = tool.effect
  if (!effect || typeof effect !== 'object') return undefined
  if (effect.kind === 'none') return { readOnlyHint: true, openWorldHint: false }
  if (effect.kind === 'local_mutation') return { readOnlyHint: false, openWorldHint: false }
  if (effect.kind === 'external_mutation') return { readOnlyHint: false, openWorldHint: true }
  return undefined
}

const ANNOTATION_TYPES = { title: 'string', readOnlyHint: 'boolean', destructiveHint: 'boolean', idempotentHint: 'boolean', openWorldHint: 'boolean' }

/**
 * The hints of the tool's declared effect, then its own `annotations` over them (MCP's keys, each of its
 * type; other keys are not listed), except `readOnlyHint`: the effect is what dispatch enforces, and a
 * client may skip its confirmation for a tool that says it is read-only.
 */
function annotationsFor(tool, name) {
  const derived = effectHints(tool)
  const out = { ...derived }
  const declared = tool.annotations
  if (declared !== undefined) {
    if (!isPlainObject(declared)) throw serverError(`MCP tool ${name} annotations must be an object`, 'ERR_PRISM_MCP_SCHEMA')
    for (const [key, type] of Object.entries(ANNOTATION_TYPES)) {
      const value = declared[key]
      if (value === undefined) continue
      if (typeof value !== type) throw serverError(`MCP tool ${name} annotations.${key} must be a ${type}`, 'ERR_PRISM_MCP_SCHEMA')
      if (type === 'string' && utf8Bytes(value) > SCHEMA_BOUNDS.maxToolDescriptionBytes) {
        throw serverError(`MCP tool ${name} annotations.${key} exceeds ${SCHEMA_BOUNDS.maxToolDescriptionBytes} bytes`, 'ERR_PRISM_MCP_LIMIT')
      }
      out[key] = value
    }
  }
  if (derived !== undefined) out.readOnlyHint = derived.readOnlyHint
  return Object.keys(out).length ? out : undefined
}

/** The `outputSchema` MCP lists, or undefined: MCP requires a JSON Schema of type "object". */
function outputSchemaFor(name, outputSchema) {
  if (outputSchema === undefined) return undefined
  if (!isPlainObject(outputSchema) || outputSchema.type !== 'object') {
    throw serverError(`MCP tool ${name} outputSchema must be a JSON Schema of type "object"`, 'ERR_PRISM_MCP_SCHEMA')
  }
  return outputSchema
}

/** The schema MCP lists: `parameters` (`type: "object"` added when missing), or `{ type: "object" }`. */
function inputSchemaFor(name, parameters) {
  if (parameters === undefined || parameters === null) return { type: 'object' }
  if (typeof parameters !== 'object' || Array.isArray(parameters)) {
    throw serverError(`MCP tool ${name} parameters must be a JSON Schema object`, 'ERR_PRISM_MCP_SCHEMA')
  }
  if (parameters.type === undefined) return { type: 'object', ...parameters }
  if (parameters.type !== 'object') {
    throw serverError(`MCP tool ${name} parameters must be a JSON Schema of type "object"`, 'ERR_PRISM_MCP_SCHEMA')
  }
  return parameters
}

/**
 * The `tools/list` entry of one tool and the bytes of its schema; throws `ERR_PRISM_MCP_LIMIT` /
 * `ERR_PRISM_MCP_SCHEMA` naming the tool and the bound. Cached per tool object.
 */
function listedTool(tool, description = tool.description, parameters = tool.parameters) {
  const cached = listedCache.get(tool)
  if (cached) return cached
  const name = tool.name
  if (typeof name !== 'string' || name.length === 0 || utf8Bytes(name) > SCHEMA_BOUNDS.maxToolNameBytes) {
    throw serverError(`MCP tool name must be non-empty and <= ${SCHEMA_BOUNDS.maxToolNameBytes} bytes`, 'ERR_PRISM_MCP_LIMIT')
  }
  if (description !== undefined && (typeof description !== 'string' || utf8Bytes(description) > SCHEMA_BOUNDS.maxToolDescriptionBytes)) {
    throw serverError(`MCP tool ${name} description exceeds ${SCHEMA_BOUNDS.maxToolDescriptionBytes} bytes`, 'ERR_PRISM_MCP_LIMIT')
  }
  const title = tool.title
  if (title !== undefined && (typeof title !== 'string' || utf8Bytes(title) > SCHEMA_BOUNDS.maxToolDescriptionBytes)) {
    throw serverError(`MCP tool ${name} title must be a string of at most ${SCHEMA_BOUNDS.maxToolDescriptionBytes} bytes`, 'ERR_PRISM_MCP_LIMIT')
  }
  const inputSchema = inputSchemaFor(name, parameters)
  const outputSchema = outputSchemaFor(name, tool.outputSchema)
  const bounds = { maxBytes: SCHEMA_BOUNDS.maxToolSchemaBytes, maxDepth: SCHEMA_BOUNDS.maxJsonDepth, maxProperties: SCHEMA_BOUNDS.maxJsonProperties }
  let { bytes } = measureBoundedJson(inputSchema, { ...bounds, label: `MCP tool ${name} inputSchema` })
  if (outputSchema !== undefined) {
    // One budget for both schemas of a tool.
    bytes += measureBoundedJson(outputSchema, { ...bounds, maxBytes: Math.max(1, bounds.maxBytes - bytes), label: `MCP tool ${name} outputSchema` }).bytes
  }
  const entry = { name, inputSchema }
  if (title !== undefined) entry.title = title
  if (description !== undefined) entry.description = description
  if (outputSchema !== undefined) entry.outputSchema = outputSchema
  const annotations = annotationsFor(tool, name)
  if (annotations) entry.annotations = annotations
  const out = { entry: Object.freeze(entry), bytes }
  listedCache.set(tool, out)
  return out
}

/** Entries of every tool, bounded in total; `onSkip(tool, error)` decides what a failing tool does. */
function listTools(tools, onSkip) {
  const out = []
  let total = 0
  for (const tool of tools) {
    let listed
    try {
      listed = listedTool(tool)
    } catch (error) {
      onSkip(tool, error)
      continue
    }
    total += listed.bytes
    if (total > SCHEMA_BOUNDS.maxTotalToolSchemaBytes) {
      throw serverError(`MCP tools/list exceeds ${SCHEMA_BOUNDS.maxTotalToolSchemaBytes} schema bytes`, 'ERR_PRISM_MCP_LIMIT')
    }
    out.push(listed.entry)
  }
  return out
}

function stringify(value) {
  try {
    return JSON.stringify(value) ?? 'null'
  } catch {
    return '[unserializable result]'
  }
}

function isPlainObject(value) {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false
  const proto = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

/** A file or document as MCP content: an embedded resource with its bytes, else a link to where it is. */
function fileBlock(block) {
  const mimeType = mediaTypeOf(block)
  const name = typeof block.name === 'string' && block.name !== '' ? block.name : undefined
  const where = typeof block.resourceUri === 'string' ? block.resourceUri : typeof block.url === 'string' && dataUrl(block.url) === undefined ? block.url : undefined
  if (typeof block.data === 'string') {
    // An embedded resource needs a URI; an inline file without one is named by a scheme no client resolves.
    const uri = where ?? `attachment:${encodeURIComponent(name ?? 'file')}`
    return { type: 'resource', resource: { uri, ...(mimeType ? { mimeType } : {}), blob: block.data } }
  }
  if (where === undefined) return undefined
  return { type: 'resource_link', uri: where, name: name ?? where, ...(mimeType ? { mimeType } : {}) }
}

/** One ToolResult content block as MCP content (lib/tool-result-content.js names the kinds), or a note. */
function mcpBlock(block) {
  if ((block.type === 'text' || block.type === 'thinking') && typeof block.text === 'string') return { type: 'text', text: block.text }
  const mimeType = mediaTypeOf(block)
  if ((block.type === 'image' || block.type === 'audio') && typeof block.data === 'string' && mimeType !== undefined) {
    return { type: block.type, data: block.data, mimeType }
  }
  if (block.type === 'resource_link' && typeof block.uri === 'string') return resourceLinkBlock(block)
  if (block.type === 'file' || block.type === 'document') {
    const out = fileBlock(block)
    if (out !== undefined) return out
  }
  return { type: 'text', text: `[${typeof block.type === 'string' ? block.type : 'content'}]` }
}

/** Content blocks of a result as MCP content. */
function blocksOf(result) {
  const content = result.content
  if (typeof content === 'string') return [{ type: 'text', text: content }]
  if (!Array.isArray(content)) return []
  const out = []
  for (const block of content) if (block && typeof block === 'object') out.push(mcpBlock(block))
  return out
}

/** Bytes a non-text MCP block takes of the budget: its base64 text and media type, or its JSON. */
function blockBytes(block) {
  if (block.type === 'image' || block.type === 'audio') return block.data.length + utf8Bytes(block.mimeType)
  if (block.type === 'resource') return block.resource.blob.length + utf8Bytes(block.resource.uri) + utf8Bytes(block.resource.mimeType ?? '')
  return utf8Bytes(JSON.stringify(block))
}

/**
 * The `CallToolResult` of a `ToolResult`: redacted first, then its blocks cut to `maxBytes` in total
 * (an image that does not fit is replaced by a note). A plain-object `value` also goes out as
 * `structuredContent` when it fits beside the text. `_meta["prism/error"]` carries the error's
 * `code` (`ERR_PRISM_MCP_BLOCKED` for a blocked call without one, `ERR_PRISM_MCP_TOOL` for a tool's
 * error without one), `name`, dispatch's blocked `reason` and the `tool`.
 */
function toCallToolResult(result, maxBytes, redactor, blockedReason, outputSchema) {
  const safe = redactor ? redactor.redact(result) : result
  if (outputSchema !== undefined && !safe.error) return toStructuredCallToolResult(safe, maxBytes, outputSchema)
  let blocks = blocksOf(safe)
  if (blocks.length === 0) {
    const text = safe.value !== undefined ? stringify(safe.value) : safe.error?.message ?? 'OK'
    blocks = [{ type: 'text', text }]
  }
  const out = []
  let used = 0
  let truncated = false
  for (const block of blocks) {
    const remaining = maxBytes - used
    if (block.type !== 'text') {
      const size = blockBytes(block)
      if (size <= remaining) {
        out.push(block)
        used += size
        continue
      }
      truncated = true
      const kind = block.type === 'resource' ? `resource ${block.resource.mimeType ?? ''}` : `${block.type} ${block.mimeType ?? ''}`
      const note = truncateUtf8(`[${kind.trim()} omitted: over ${maxBytes} bytes]`, remaining)
      if (note) out.push({ type: 'text', text: note })
      used += utf8Bytes(note)
      continue
    }
    const text = truncateUtf8(block.text, remaining)
    if (text.length < block.text.length) truncated = true
    if (text || out.length === 0) out.push({ type: 'text', text })
    used += utf8Bytes(text)
  }
  const call = { content: out, isError: Boolean(safe.error) }
  if (!safe.error && isPlainObject(safe.value)) {
    try {
      boundedJson(safe.value, Math.max(1, maxBytes - used))
      call.structuredContent = safe.value
    } catch {
      // Too large beside the text: the text alone carries it.
    }
  }
  const meta = {}
  if (safe.error) {
    const error = { code: safe.error.code ?? (blockedReason ? 'ERR_PRISM_MCP_BLOCKED' : 'ERR_PRISM_MCP_TOOL') }
    if (typeof safe.error.name === 'string') error.name = safe.error.name
    if (blockedReason) error.reason = blockedReason
    if (typeof safe.name === 'string') error.tool = safe.name
    meta['prism/error'] = error
  }
  if (truncated) meta['prism/truncated'] = true
  if (Object.keys(meta).length) call._meta = meta
  return call
}

/**
 * The `CallToolResult` of a successful call of a tool with an `outputSchema`: its `value` is the
 * `structuredContent`, which must be a JSON object that matches the schema and fits `maxBytes` (MCP
 * requires it, and an SDK client refuses a result without it); the text blocks share what is left.
 * Otherwise an error result, `ERR_PRISM_MCP_INVALID_OUTPUT` naming the path, or `ERR_PRISM_MCP_LIMIT`.
 */
function toStructuredCallToolResult(safe, maxBytes, outputSchema) {
  const name = typeof safe.name === 'string' ? safe.name : 'tool'
  if (!isPlainObject(safe.value)) {
    return mcpError(`Tool ${name} has an outputSchema but its result value is not an object`, 'ERR_PRISM_MCP_INVALID_OUTPUT', maxBytes)
  }
  let structuredBytes
  try {
    structuredBytes = measureBoundedJson(safe.value, { maxBytes, maxDepth: SCHEMA_BOUNDS.maxJsonDepth, maxProperties: SCHEMA_BOUNDS.maxJsonProperties, label: `Tool ${name} structuredContent` }).bytes
  } catch (error) {
    return mcpError(error.message, 'ERR_PRISM_MCP_LIMIT', maxBytes)
  }
  const mismatch = outputSchemaMismatch(name, outputSchema, safe.value)
  if (mismatch !== undefined) {
    return mcpError(`Tool ${name} result does not match its outputSchema: ${mismatch}`, 'ERR_PRISM_MCP_INVALID_OUTPUT', maxBytes)
  }
  const rest = toCallToolResult({ ...safe, value: undefined, content: safe.content ?? stringify(safe.value) }, Math.max(0, maxBytes - structuredBytes))
  rest.structuredContent = safe.value
  return rest
}

/** An error result the server itself produces (`<code>: <message>`, as upstream). */
function mcpError(message, code, maxBytes) {
  return {
    isError: true,
    content: [{ type: 'text', text: truncateUtf8(`${code}: ${message}`, maxBytes) }],
    _meta: { 'prism/error': { code } },
  }
}

/** A protocol answer (resource, prompt) redacted, then bounded as JSON. */
function boundedProtocolResult(value, maxBytes, label, redactor) {
  const safe = redactor ? redactor.redact(value) : value
  return boundedJson(safe, maxBytes, label)
}

module.exports = { listedTool, listTools, toCallToolResult, mcpError, boundedProtocolResult, stringify }
