'use strict'
// MCP Apps (the `io.modelcontextprotocol/ui` extension), with `@arnilo/prism-mcp`'s option and facade:
// with `mcpApps: true` the client offers the extension, the server must acknowledge it ("MCP Apps
// extension was not negotiated" otherwise), a tool whose `_meta.ui.visibility` leaves out `"model"` is
// kept from `bridge.tools` (the model never sees it) and reachable only through `bridge.apps.callTool`,
// and a tool's UI resource is read as bounded HTML5 with its CSP and permission metadata checked.
const sdk = require('./sdk.js')
const { McpBridgeError, McpBridgeClosedError } = require('./errors.js')
const { measureBoundedJson, utf8Bytes } = require('./json-bounds.js')
const { checkedSchema, isPlainObject } = require('./shape.js')

const EXTENSION = 'io.modelcontextprotocol/ui'
const HTML_MIME = 'text/html;profile=mcp-app'

function appsError(message) {
  return new McpBridgeError(message, { code: 'ERR_PRISM_MCP_APPS' })
}

function record(value) {
  return isPlainObject(value) ? value : undefined
}

function appsClientCapabilities() {
  return { extensions: { [EXTENSION]: {} } }
}

function assertMcpAppsNegotiated(client) {
  const capabilities = client && typeof client.getServerCapabilities === 'function' ? record(client.getServerCapabilities()) : undefined
  if (!record(capabilities?.extensions)?.[EXTENSION]) throw appsError('MCP Apps extension was not negotiated')
}

function assertStringBytes(label, value, maxBytes) {
  if (utf8Bytes(value) > maxBytes) throw appsError(`${label} exceeds ${maxBytes} bytes`)
}

function assertUiUri(value, label) {
  let url
  try {
    url = new URL(value)
  } catch {
    throw appsError(`${label} is invalid`)
  }
  if (url.protocol !== 'ui:' || !url.hostname || url.username || url.password || url.hash || utf8Bytes(value) > 4 * 1024) {
    throw appsError(`${label} is invalid`)
  }
}

function assertCspOrigin(value, kind) {
  let url
  try {
    url = new URL(value)
  } catch {
    throw appsError('MCP Apps CSP origin is invalid')
  }
  const schemes = kind === 'connectDomains' ? ['https:', 'wss:'] : ['https:']
  if (!schemes.includes(url.protocol) || url.username || url.password || url.pathname !== '/' || url.search || url.hash || url.hostname.includes('*') || utf8Bytes(value) > 512) {
    throw appsError('MCP Apps CSP origin is invalid')
  }
}

/** `_meta.ui` of a tool or resource, bounded; undefined when absent. */
function uiRecord(meta, limits, label) {
  if (meta === undefined) return undefined
  measureBoundedJson(meta, { maxBytes: limits.maxToolDescriptionBytes, maxDepth: limits.maxJsonDepth, maxProperties: limits.maxJsonProperties, label: `${label} MCP Apps metadata` })
  const ui = record(meta)?.ui
  if (ui === undefined) return undefined
  if (!record(ui)) throw appsError(`${label} has invalid MCP Apps metadata`)
  return ui
}

function toolVisibility(meta, limits, label) {
  const value = uiRecord(meta, limits, label)?.visibility
  if (value === undefined) return ['model', 'app']
  const ok = Array.isArray(value) && value.length >= 1 && value.length <= 2 && new Set(value).size === value.length && value.every((v) => v === 'model' || v === 'app')
  if (!ok) throw appsError(`${label} has invalid MCP Apps visibility`)
  return [...value]
}

function toolResourceUri(meta, limits, label) {
  // The nested `ui.resourceUri` wins over the older flat `ui/resourceUri`.
  const uri = uiRecord(meta, limits, label)?.resourceUri ?? record(meta)?.['ui/resourceUri']
  if (uri === undefined) return undefined
  if (typeof uri !== 'string') throw appsError(`${label} has invalid MCP Apps resource URI`)
  assertUiUri(uri, `${label} MCP Apps resource URI`)
  return uri
}

function uiResourceMetadata(meta, limits, label) {
  const ui = uiRecord(meta, limits, label)
  if (!ui) return undefined
  const csp = {}
  for (const key of ['connectDomains', 'resourceDomains', 'frameDomains', 'baseUriDomains']) {
    const value = record(ui.csp)?.[key]
    if (value === undefined) continue
    if (!Array.isArray(value) || value.length > 32 || !value.every((v) => typeof v === 'string')) throw appsError(`${label} has invalid MCP Apps CSP`)
    for (const origin of value) assertCspOrigin(origin, key)
    csp[key] = [...value]
  }
  const permissions = {}
  const asked = record(ui.permissions)
  if (asked) for (const key of ['camera', 'microphone', 'geolocation', 'clipboardWrite']) if (record(asked[key])) permissions[key] = true
  if (ui.domain !== undefined && !(typeof ui.domain === 'string' && /^[a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?$/i.test(ui.domain))) {
    throw appsError(`${label} has invalid MCP Apps domain`)
  }
  if (ui.prefersBorder !== undefined && typeof ui.prefersBorder !== 'boolean') throw appsError(`${label} has invalid MCP Apps border preference`)
  const out = {}
  if (Object.keys(csp).length) out.csp = csp
  if (Object.keys(permissions).length) out.permissions = permissions
  if (ui.domain !== undefined) out.domain = ui.domain
  if (ui.prefersBorder !== undefined) out.prefersBorder = ui.prefersBorder
  return Object.keys(out).length ? out : undefined
}

/** The app view of a listed tool; throws McpBridgeError (code ERR_PRISM_MCP_APPS) on bad metadata. */
function toMcpAppTool(tool, prismName, limits) {
  const label = `MCP tool ${tool.name}`
  const visibility = toolVisibility(tool._meta, limits, label)
  const resourceUri = toolResourceUri(tool._meta, limits, label)
  const out = { name: tool.name, prismName }
  if (tool.description !== undefined) out.description = tool.description
  out.inputSchema = tool.inputSchema
  if (resourceUri !== undefined) out.resourceUri = resourceUri
  out.visibility = visibility
  return Object.freeze(out)
}

function resourceDescriptor(value, limits) {
  const resource = record(value)
  if (!resource || typeof resource.uri !== 'string' || typeof resource.name !== 'string' || resource.mimeType !== HTML_MIME) return undefined
  assertUiUri(resource.uri, 'MCP App resource URI')
  assertStringBytes('MCP App resource name', resource.name, limits.maxToolNameBytes)
  if (resource.description !== undefined && typeof resource.description !== 'string') throw appsError('MCP App resource description is invalid')
  const out = { uri: resource.uri, name: resource.name }
  if (resource.description !== undefined) out.description = resource.description
  out.mimeType = HTML_MIME
  const ui = uiResourceMetadata(resource._meta, limits, 'MCP App resource')
  if (ui !== undefined) out.ui = ui
  return out
}

function decodeHtmlBlob(value) {
  if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(value)) throw appsError('MCP App HTML blob is invalid')
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(value, 'base64'))
  } catch {
    throw appsError('MCP App HTML blob is invalid')
  }
}

/**
 * `bridge.apps`. `state` is the bridge's state (client, limits, appTools, status); `callAppTool(remoteName,
 * args, ctx)` runs a call through the bridge's own call path.
 */
function createMcpAppsFacade(state, callAppTool) {
  const assertOpen = () => {
    if (state.status === 'closed') throw new McpBridgeClosedError()
  }
  const requestOptions = () => ({ timeout: state.limits.callTimeoutMs, maxTotalTimeout: state.limits.callTimeoutMs })
  const bounded = (value, label) =>
    measureBoundedJson(value, { maxBytes: state.limits.maxResultBytes, maxDepth: state.limits.maxJsonDepth, maxProperties: state.limits.maxJsonProperties, label })
  const listResources = async () => {
    assertOpen()
    const types = sdk.types()
    const schema = checkedSchema(types.ListResourcesResultSchema, 'MCP Apps resources/list result')
    const out = []
    const seen = new Set()
    let cursor
    for (let page = 0; page < state.limits.maxListPages; page++) {
      const result = await state.client.request({ method: 'resources/list', params: cursor === undefined ? undefined : { cursor } }, schema, requestOptions())
      bounded(result, 'MCP Apps resources/list')
      for (const resource of Array.isArray(result.resources) ? result.resources : []) {
        const parsed = resourceDescriptor(resource, state.limits)
        if (parsed) out.push(parsed)
        if (out.length > state.limits.maxTools) throw appsError('MCP Apps resources/list exceeds configured item limit')
      }
      cursor = result.nextCursor || undefined
      if (!cursor) return out
      if (typeof cursor !== 'string') throw appsError('MCP Apps resources/list cursor is not a string')
      assertStringBytes('MCP Apps resources/list cursor', cursor, state.limits.maxCursorBytes)
      if (seen.has(cursor)) throw appsError('MCP Apps resources/list repeated a pagination cursor')
      seen.add(cursor)
    }
    throw appsError(`MCP Apps resources/list exceeds ${state.limits.maxListPages} pages`)
  }
  const readResource = async (uri) => {
    assertOpen()
    if (typeof uri !== 'string') throw appsError('MCP App resource URI is invalid')
    assertUiUri(uri, 'MCP App resource URI')
    const tool = state.appTools.find((candidate) => candidate.resourceUri === uri)
    if (!tool) throw appsError('MCP App resource is unavailable')
    const schema = checkedSchema(sdk.types().ReadResourceResultSchema, 'MCP Apps resources/read result')
    const result = await state.client.request({ method: 'resources/read', params: { uri } }, schema, requestOptions())
    bounded(result, 'MCP Apps resources/read')
    const listed = (await listResources()).find((candidate) => candidate.uri === uri)
    const content = (Array.isArray(result.contents) ? result.contents : []).find((candidate) => record(candidate)?.uri === uri)
    if (content?.mimeType !== HTML_MIME) throw appsError('MCP App resource must be declared HTML')
    const text = typeof content.text === 'string' ? content.text : undefined
    const blob = typeof content.blob === 'string' ? decodeHtmlBlob(content.blob) : undefined
    if ((text === undefined) === (blob === undefined)) throw appsError('MCP App resource requires one HTML body')
    const html = text ?? blob
    if (utf8Bytes(html) > state.limits.maxResultBytes || !/<!doctype\s+html[\s>]/i.test(html) || !/<html[\s>]/i.test(html)) {
      throw appsError('MCP App resource is not bounded HTML5')
    }
    // What the read says wins over what the listing said.
    const ui = uiResourceMetadata(content._meta, state.limits, 'MCP App resource') ?? listed?.ui
    const out = { uri, name: tool.name }
    if (tool.description !== undefined) out.description = tool.description
    out.mimeType = HTML_MIME
    out.html = html
    if (ui !== undefined) out.ui = ui
    return out
  }
  return {
    serverId: state.serverId,
    negotiated: true,
    get tools() {
      assertOpen()
      return state.appTools
    },
    listResources,
    readResource,
    callTool(name, args, ctx) {
      assertOpen()
      const tool = state.appTools.find((candidate) => candidate.name === name && candidate.visibility.includes('app'))
      if (!tool) throw appsError('MCP App tool is unavailable')
      return callAppTool(name, args, ctx)
    },
  }
}

module.exports = { appsClientCapabilities, assertMcpAppsNegotiated, toMcpAppTool, createMcpAppsFacade, MCP_APPS_EXTENSION: EXTENSION }
