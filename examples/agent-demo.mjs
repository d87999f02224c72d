// An agent over the 117 real tools of GitHub's MCP server, driven by a scripted provider.
// Run: npm run demo:agent
//
// What it shows: search disclosure picks a handful of tools per turn out of 117; the model's
// search_tools call activates more; one malformed streamed call is blocked and corrected on the
// next turn; three calls run in parallel and their results land in call order; one call to a tool
// hidden by the host's narrowing is denied; every call leaves ledger rows.
import { readFileSync } from 'node:fs'
import {
  createAgent,
  createMemoryRunLedger,
  createMockProvider,
  providerDone,
  providerTextDelta,
  providerToolCall,
  providerToolCallDelta,
  toolCallContent,
} from '../index.mjs'
import { createOpenAICompatibleProvider } from '../providers/openai-compatible.mjs'
import { printLedgerRows, printToolCalls } from './demo-tables.mjs'

const definitions = JSON.parse(readFileSync(new URL('./github-mcp-tools.json', import.meta.url), 'utf8'))

// Host tools: the real names, descriptions and schemas; a canned body instead of GitHub.
const delays = { pull_request_read: 30, list_pull_requests: 5, get_me: 15 }
const tools = definitions.map((def) => ({
  ...def,
  async execute(args, ctx) {
    await new Promise((resolve) => setTimeout(resolve, delays[def.name] ?? 1))
    return { toolCallId: ctx.toolCallId, name: def.name, value: { ok: true, tool: def.name, args } }
  },
}))

const call = (id, name, args) => providerToolCall(toolCallContent(id, name, args))
const repo = { owner: 'octo', repo: 'hello-world' }
const script = [
  // 1: the model looks for review tools.
  [providerTextDelta('Let me find the review tools. '), call('call_1', 'search_tools', { query: 'pull request review comments', k: 4 }), providerDone({ inputTokens: 900, outputTokens: 20 })],
  // 2: a streamed call whose argument text is cut off: blocked, never executed.
  [
    providerToolCallDelta({ index: 0, id: 'call_2', name: 'pull_request_read' }),
    providerToolCallDelta({ index: 0, argumentsText: '{"method":"get","owner":"octo","repo":"hello-world","pullNumber":' }),
    providerDone({ inputTokens: 950, outputTokens: 25 }),
  ],
  // 3: the corrected call, plus two more: three calls in parallel.
  [
    call('call_3', 'pull_request_read', { method: 'get', ...repo, pullNumber: 42 }),
    call('call_4', 'list_pull_requests', { ...repo, state: 'open' }),
    call('call_5', 'get_me', {}),
    providerDone({ inputTokens: 1100, outputTokens: 60 }),
  ],
  // 4: the model reaches for a tool the host hides this run: denied by the turn's filter.
  [call('call_6', 'delete_repository', repo), providerDone({ inputTokens: 1300, outputTokens: 15 })],
  // 5: the answer.
  [providerTextDelta('PR #42 is open and ready for review; I did not delete anything.'), providerDone({ inputTokens: 1400, outputTokens: 30 })],
]

const turns = []
const onRequest = (request, index) => turns.push({ turn: index + 1, tools: request.tools.map((t) => t.name), meta: request.metadata.tools })
// With OPENAI_BASE_URL set (and OPENAI_API_KEY, OPENAI_MODEL), the same run goes to that endpoint.
const live = process.env.OPENAI_BASE_URL
  ? createOpenAICompatibleProvider({ baseUrl: process.env.OPENAI_BASE_URL, apiKey: process.env.OPENAI_API_KEY })
  : undefined
const provider = live
  ? { id: live.id, generate: (request) => (onRequest(request, turns.length), live.generate(request)) }
  : createMockProvider(script, { onRequest })
const ledger = createMemoryRunLedger()
const agent = createAgent({
  model: live ? { provider: 'openai-compatible', model: process.env.OPENAI_MODEL ?? 'gpt-4o-mini' } : { provider: 'mock', model: 'scripted' },
  provider,
  tools,
  instructions: 'You are a careful GitHub assistant.',
  toolsDisclosure: 'search',
  toolsSearch: { topK: 6 },
  // The host never offers destructive tools to this agent.
  toolNarrowing: ({ toolIds }) => toolIds.filter((name) => !name.startsWith('delete_')),
  loop: { strategy: 'single-shot', toolConcurrency: 3 },
  runLedger: ledger,
})
const session = agent.createSession({ id: 'demo' })

// Every event of the run, as a host's subscriber sees it; the run resolves its result (a failed or
// aborted run would reject with AgentRunError).
const events = []
const watching = (async () => {
  for await (const event of session.subscribe()) events.push(event)
})()
const result = await session.run('Review pull request 42 in octo/hello-world')
await watching

console.log(`\n${tools.length} tools registered; search disclosure, topK 6, toolConcurrency 3\n`)
console.log('Turns and the tools disclosed to the provider')
for (const t of turns) {
  console.log(`  turn ${t.turn}: ${t.meta.count} tools (${t.meta.idsHash.slice(0, 19)}…)`)
  console.log(`    ${t.tools.join(', ')}`)
}

console.log("\nTool calls, in transcript order (disclosure describes tools; it grants nothing and hides nothing:\nthe grant and the turn's narrowing decide what may run)")
printToolCalls(session.messages(), events, [8, 20, 17, 62], (r) => (r.name === 'search_tools' ? `activated: ${r.result.names.join(', ')}` : JSON.stringify(r.result.args)))

console.log('\nOrder the parallel calls finished in (turn 3):')
console.log('  ' + events.filter((e) => e.type === 'tool_execution_finished' && ['call_3', 'call_4', 'call_5'].includes(e.result.toolCallId)).map((e) => e.result.toolCallId).join(' → '))

console.log('\nLedger rows')
printLedgerRows(ledger.list(), [8, 20, 9, 20])

console.log(`\nResult: ${result.status} (${result.finishReason}) after ${turns.length} turns; usage ${JSON.stringify(result.usage)}`)
console.log(`Answer: ${result.text}\n`)
