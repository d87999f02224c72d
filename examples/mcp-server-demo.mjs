// The agent demo's tools (the 117 real tools of GitHub's MCP server, with a canned body) served to any
// MCP client over stdio. Run: npm run demo:mcp-server, or point a client at it:
//   npx @modelcontextprotocol/inspector-cli node examples/mcp-server-demo.mjs --method tools/list
//   claude mcp add prism-demo -- node /path/to/examples/mcp-server-demo.mjs
//
// What it shows: the host's filter hides every delete_* tool from tools/list and refuses calls to
// them; every call goes through dispatch (schema validation, the identity of the process owner,
// effect claims in a store, ledger rows, redaction of the token); stdout is the protocol, so the
// demo's own lines go to stderr. Started from a terminal (no client on stdin), it runs a short
// session against itself with the SDK's client and prints what happened (`--self` forces that).
import { readFileSync } from 'node:fs'
import { userInfo } from 'node:os'
import { fileURLToPath } from 'node:url'
import { createMemoryRunLedger, createMemoryToolEffectStore, createToolRegistry } from '../index.mjs'
import { createPrismMcpServer } from '../mcp/index.mjs'

const TOKEN = 'ghp_demo0000000000000000000000000000000'
const definitions = JSON.parse(readFileSync(new URL('./github-mcp-tools.json', import.meta.url), 'utf8'))
const writes = /^(create|update|merge|push|add|delete|fork|assign|request|submit|dismiss|run|rerun|cancel)_/
const tools = definitions.map((def) => ({
  ...def,
  // Writes are external mutations claimed in the effect store; reads are observations.
  effect: writes.test(def.name) ? { kind: 'external_mutation', idempotency: 'optional' } : { kind: 'none', idempotency: 'none' },
  async execute(args, ctx) {
    // A canned body instead of GitHub; the token in it never reaches the client or the ledger.
    return { toolCallId: ctx.toolCallId, name: def.name, value: { ok: true, tool: def.name, args, auth: `token ${TOKEN}` } }
  },
}))

const owner = userInfo().username || 'local'
const identity = { tenantId: 'demo', userId: owner, principal: { kind: 'user', id: owner }, scopes: ['tools:execute'], issuedAt: new Date().toISOString(), verified: true }
const ledger = createMemoryRunLedger()

export function createDemoServer() {
  return createPrismMcpServer({
    name: 'prism-demo-github',
    registry: createToolRegistry(tools),
    filter: { deny: definitions.map((def) => def.name).filter((name) => name.startsWith('delete_')) },
    // stdio has no transport authentication: the caller is the user who started the process.
    authorize: () => ({ allowed: true, ownership: { tenantId: 'demo', userId: owner }, identity }),
    effectStore: createMemoryToolEffectStore(),
    ledger,
    secrets: [TOKEN],
  })
}

async function selfDemo() {
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js')
  const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js')
  const client = new Client({ name: 'demo-client', version: '1.0.0' })
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [fileURLToPath(import.meta.url), '--serve'] }))
  const { tools: listed } = await client.listTools()
  console.log(`tools/list: ${listed.length} of ${definitions.length} tools (delete_* hidden by the host's filter)`)
  const me = await client.callTool({ name: 'get_me', arguments: {} })
  console.log('get_me        →', me.content[0].text)
  const bad = await client.callTool({ name: 'list_pull_requests', arguments: { owner: 'octo' } })
  console.log('bad arguments →', bad._meta['prism/error'].reason, '-', bad.content[0].text)
  const denied = await client.callTool({ name: 'delete_file', arguments: {} })
  console.log('delete_file   →', denied._meta['prism/error'].reason, '-', denied.content[0].text)
  const issue = { name: 'create_issue', arguments: { owner: 'octo', repo: 'hello-world', title: 'Flaky test' }, _meta: { 'prism/toolCallId': 'issue-1' } }
  const first = await client.callTool(issue)
  const retry = await client.callTool(issue)
  console.log('create_issue  → same result on retry (claimed once):', first.content[0].text === retry.content[0].text)
  await client.close()
}

if (process.argv.includes('--serve') || (!process.stdin.isTTY && !process.argv.includes('--self'))) {
  const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js')
  const server = createDemoServer()
  await server.connect(new StdioServerTransport())
  process.stdin.on('close', () => {
    const rows = ledger.list('tool_call')
    console.error(`prism-demo-github: ${rows.length} ledger rows; statuses ${[...new Set(rows.map((row) => row.status))].join(', ')}`)
    process.exit(0)
  })
  console.error(`prism-demo-github: serving ${tools.length} tools over stdio`)
} else {
  await selfDemo()
}
