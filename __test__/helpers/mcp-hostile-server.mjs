// MCP servers that misbehave, for the bridge's tests, built on the SDK's own server classes and run
// over stdio: `node mcp-hostile-server.mjs <mode>`. Modes: hang, huge, exit, many, schemas, collide,
// dup, changing, shapes, malformed. Each also offers a well-behaved `echo` (except many/collide/dup).
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { z } from 'zod'

const mode = process.argv[2]
const obj = (properties = {}, extra = {}) => ({ type: 'object', properties, ...extra })
const echoTool = { name: 'echo', description: 'Echoes text', inputSchema: obj({ text: { type: 'string' } }, { required: ['text'] }), annotations: { readOnlyHint: true } }
const text = (t) => ({ content: [{ type: 'text', text: t }] })

function lowLevel(listTools, callTool) {
  const server = new Server({ name: `hostile-${mode}`, version: '1.0.0' }, { capabilities: { tools: { listChanged: true } } })
  server.setRequestHandler(ListToolsRequestSchema, listTools)
  server.setRequestHandler(CallToolRequestSchema, callTool)
  return server
}

function nested(depth) {
  let schema = { type: 'string' }
  for (let i = 0; i < depth; i++) schema = obj({ inner: schema })
  return schema
}

let server
switch (mode) {
  case 'hang':
  case 'huge':
  case 'exit':
    server = lowLevel(
      async () => ({
        tools: [
          echoTool,
          { name: 'hang', description: 'Never answers', inputSchema: obj() },
          { name: 'huge', description: 'Returns 50 MB of text', inputSchema: obj() },
          { name: 'big', description: 'Returns 12 MB of text', inputSchema: obj() },
          { name: 'exit', description: 'Exits the process mid-call', inputSchema: obj() },
        ],
      }),
      async (request) => {
        switch (request.params.name) {
          case 'echo':
            return text(String(request.params.arguments?.text))
          case 'hang':
            return new Promise(() => {})
          case 'huge':
            return text('x'.repeat(50 * 1024 * 1024))
          case 'big':
            return text('y'.repeat(12 * 1024 * 1024))
          case 'exit':
            setTimeout(() => process.exit(3), 50)
            return new Promise(() => {})
          default:
            return { ...text(`unknown tool ${request.params.name}`), isError: true }
        }
      },
    )
    break
  case 'many': {
    const all = Array.from({ length: 5000 }, (_, i) => ({
      name: `tool_${String(i).padStart(4, '0')}`,
      description: i === 4321 ? 'Convert a temperature from celsius to fahrenheit' : `Synthetic tool number ${i} for inventory record ${i % 97}`,
      inputSchema: obj({ id: { type: 'integer' } }),
    }))
    server = lowLevel(
      async (request) => {
        const start = Number(request.params?.cursor ?? 0)
        const next = start + 100
        return { tools: all.slice(start, next), ...(next < all.length ? { nextCursor: String(next) } : {}) }
      },
      async (request) => text(`called ${request.params.name}`),
    )
    break
  }
  case 'schemas': {
    const hostileProto = JSON.parse('{"type":"object","properties":{"__proto__":{"type":"string"}}}')
    server = lowLevel(
      async () => ({
        tools: [
          echoTool,
          { name: 'unknown_type', inputSchema: obj({ a: { type: 'dict' } }) },
          { name: 'remote_ref', inputSchema: obj({ a: { $ref: 'http://127.0.0.1:1/evil.json' } }) },
          { name: 'proto_key', inputSchema: hostileProto },
          { name: 'too_deep', inputSchema: nested(200) },
          { name: 'too_big', inputSchema: obj({ blob: { type: 'string', description: 'z'.repeat(300 * 1024) } }) },
          { name: 'bad_dialect', inputSchema: obj({}, { $schema: 'http://example.com/my-dialect' }) },
          { name: 'ref_cycle', inputSchema: obj({ a: { $ref: '#/$defs/x' } }, { $defs: { x: { $ref: '#/$defs/x' } } }) },
        ],
      }),
      async (request) => text(`called ${request.params.name}`),
    )
    break
  }
  case 'collide':
    server = lowLevel(
      async () => ({
        tools: ['read.file', 'read_file', 'read file', 'read:file', 'ä-read'].map((name) => ({ name, description: `tool ${name}`, inputSchema: obj() })),
      }),
      async (request) => text(`called ${request.params.name}`),
    )
    break
  case 'dup':
    server = lowLevel(
      async () => ({ tools: [echoTool, { ...echoTool, description: 'second echo' }] }),
      async () => text('dup'),
    )
    break
  case 'changing': {
    const mcp = new McpServer({ name: 'hostile-changing', version: '1.0.0' }, { capabilities: { tools: { listChanged: true } } })
    const registered = {}
    registered.echo = mcp.registerTool('echo', { description: 'Echoes text', inputSchema: { text: z.string() } }, async ({ text: t }) => text(t))
    mcp.registerTool('add-tools', { description: 'Adds the tools extra and secret' }, async () => {
      registered.extra = mcp.registerTool('extra', { description: 'An added tool' }, async () => text('extra ran'))
      registered.secret = mcp.registerTool('secret', { description: 'A tool the host never allowed' }, async () => text('secret ran'))
      return text('added')
    })
    mcp.registerTool('remove-echo', { description: 'Removes echo' }, async () => {
      registered.echo.remove()
      return text('removed')
    })
    server = mcp
    break
  }
  case 'shapes': {
    // Results of every shape, for the bridge's result path: `shape` answers `kind` with `text` in it.
    let cancelled = 0
    const t = (value) => ({ type: 'text', text: value })
    const shapes = {
      text: (v) => ({ content: [t(v)] }),
      blocks: (v) => ({ content: [t(v), t(''), t(`${v}!`)] }),
      error: (v) => ({ content: [t(v)], isError: true }),
      notError: (v) => ({ content: [t(v)], isError: false }),
      empty: () => ({ content: [] }),
      keyOrder: (v) => ({ content: [{ text: v, type: 'text' }] }),
      annotated: (v) => ({ content: [{ ...t(v), annotations: { priority: 0.5 } }] }),
      structured: (v) => ({ content: [t(v)], structuredContent: { text: v, n: 1 } }),
      extra: (v) => ({ content: [t(v)], extra: { x: 1 } }),
      meta: (v) => ({ content: [t(v)], _meta: { note: 'm' } }),
      image: (v) => ({ content: [{ type: 'image', data: 'aGVsbG8=', mimeType: 'image/png' }, t(v)] }),
      lone: (v) => ({ content: [t(`${v} and a lone \ud800 surrogate`)] }),
      resource: (v) => ({ content: [{ type: 'resource', resource: { uri: 'file:///a.txt', mimeType: 'text/plain', text: v } }] }),
    }
    server = lowLevel(
      async () => ({
        tools: [
          echoTool,
          { name: 'shape', description: 'A result of the given kind', inputSchema: obj({ kind: { type: 'string' }, text: { type: 'string' } }, { required: ['kind'] }) },
          { name: 'progress', description: 'Says whether it got a progress token; reports progress when it did', inputSchema: obj() },
          { name: 'hang', description: 'Never answers', inputSchema: obj() },
          { name: 'cancelled', description: 'How many hang calls were cancelled', inputSchema: obj() },
        ],
      }),
      async (request, extra) => {
        const args = request.params.arguments ?? {}
        switch (request.params.name) {
          case 'echo':
            return text(String(args.text))
          case 'shape':
            return shapes[args.kind](args.text ?? '')
          case 'progress': {
            const token = request.params._meta?.progressToken
            if (token === undefined) return text('no progress token')
            // A pause after each notification: the SDK client handles a notification a microtask later
            // than a response read in the same chunk, and drops progress that comes after its response.
            for (let i = 1; i <= 2; i++) {
              await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: i, total: 2 } })
              await new Promise((resolve) => setTimeout(resolve, 25))
            }
            return text('progress token')
          }
          case 'hang':
            // Counts the cancellations it hears of (notifications/cancelled aborts the handler's signal).
            extra.signal.addEventListener('abort', () => cancelled++)
            return new Promise(() => {})
          case 'cancelled':
            return text(String(cancelled))
          default:
            return { ...text(`unknown tool ${request.params.name}`), isError: true }
        }
      },
    )
    break
  }
  case 'malformed': {
    // Tools the MCP shapes do not allow, a flood of progress and results of the wrong shape. The
    // low-level server sends what its handlers return without checking it.
    const t = (value) => ({ type: 'text', text: value })
    server = lowLevel(
      async () => ({
        tools: [
          echoTool,
          { name: 'no_schema', description: 'No inputSchema' },
          { name: 'objekt', inputSchema: { type: 'objekt' } },
          { name: 42, inputSchema: obj() },
          { name: 'array_schema', inputSchema: [] },
          { name: 'bad_output', inputSchema: obj(), outputSchema: { type: 'string' } },
          { name: 'bad_description', description: { text: 'x' }, inputSchema: obj() },
          'just a string',
          null,
          { name: 'flood', description: 'Sends `count` progress notifications, then answers', inputSchema: obj({ count: { type: 'integer' } }) },
          { name: 'bad_result', description: 'Answers with a result of the wrong shape', inputSchema: obj({ kind: { type: 'string' } }) },
          { name: 'throws', description: 'Answers with a JSON-RPC error of 1 000+ bytes that starts with a secret', inputSchema: obj() },
        ],
      }),
      async (request, extra) => {
        const args = request.params.arguments ?? {}
        switch (request.params.name) {
          case 'echo':
            return text(String(args.text))
          case 'flood': {
            const token = request.params._meta?.progressToken
            const count = Number(args.count)
            if (token !== undefined) {
              for (let i = 1; i <= count; i++) {
                // The first message is 8 KiB, the rest short.
                const message = i === 1 ? 'm'.repeat(8192) : `step ${i}`
                await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: i, total: count, message } })
              }
              // The SDK client drops progress it handles after the response: a ping answered means the
              // client has read every notification before it.
              await server.ping()
            }
            return text(`sent ${count}`)
          }
          case 'throws':
            throw new Error(`mcp-client-secret-canary-${'x'.repeat(1000)}`)
          case 'bad_result': {
            const bad = {
              notArray: { content: 'not-an-array', isError: 'yes' },
              badBlock: { content: [{ type: 'text', text: 5 }] },
              noContent: { isError: true },
            }
            // The server checks its own results: this one passes, and the transport sends `raw` in its place.
            return { content: [], _meta: { raw: bad[args.kind] ?? { content: [t('unknown kind')] } } }
          }
          default:
            return { ...text(`unknown tool ${request.params.name}`), isError: true }
        }
      },
    )
    break
  }
  default:
    process.stderr.write(`unknown mode ${mode}\n`)
    process.exit(2)
}

const transport = new StdioServerTransport()
if (mode === 'malformed') {
  const send = transport.send.bind(transport)
  transport.send = (message, options) => send(message.result?._meta?.raw ? { ...message, result: message.result._meta.raw } : message, options)
}
await server.connect(transport)
