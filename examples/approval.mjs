// Human approval before side effects, across a restart. Run: node examples/approval.mjs
//
// What it shows: an agent that can pay and email stops before both side effects in one round and
// persists itself in a SQLite checkpoint store; a reviewer approves the email for the rest of the
// run and lowers the payment (modified arguments) in two separate decisions; the run is resumed
// from a fresh store object (as another process would) and the next provider request carries both
// results. An invalid decision first shows that a refused resume changes nothing.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  AgentDecisionError,
  createAgent,
  createMockProvider,
  createSqliteCheckpointStore,
  providerDone,
  providerTextDelta,
  providerToolCall,
  resumeAgentRun,
  toolCallContent,
} from '../index.mjs'

const dir = mkdtempSync(join(tmpdir(), 'prism-approval-example-'))
const path = join(dir, 'runs.db')
const sent = []

const tools = [
  {
    name: 'pay_invoice',
    description: 'Pay an invoice',
    parameters: { type: 'object', properties: { invoice: { type: 'string' }, amount: { type: 'number', maximum: 1000 } }, required: ['invoice', 'amount'] },
    // Small payments go through; anything else waits for a person.
    needsApproval: (args) => args.amount > 50,
    execute: (args, ctx) => {
      sent.push(`paid ${args.amount} on ${args.invoice}`)
      return { toolCallId: ctx.toolCallId, name: 'pay_invoice', value: { paid: args.amount } }
    },
  },
  {
    name: 'email',
    description: 'Send an email',
    parameters: { type: 'object', properties: { to: { type: 'string' }, body: { type: 'string' } }, required: ['to', 'body'] },
    needsApproval: true,
    execute: (args, ctx) => {
      sent.push(`mailed ${args.to}`)
      return { toolCallId: ctx.toolCallId, name: 'email', value: { sent: true } }
    },
  },
]

function agentWith(turns, requests) {
  return createAgent({
    id: 'accounts-payable',
    model: { provider: 'mock', model: 'demo' },
    provider: createMockProvider(turns, { onRequest: (r) => void requests.push(r) }),
    tools,
  })
}

// Process 1: the model asks for both side effects in one turn; the run suspends.
const store1 = createSqliteCheckpointStore({ path })
const first = agentWith([[
  providerToolCall(toolCallContent('c1', 'pay_invoice', { invoice: 'INV-7', amount: 900 })),
  providerToolCall(toolCallContent('c2', 'email', { to: 'vendor@example.com', body: 'Paid INV-7' })),
  providerDone(),
]], [])
const suspended = await first.createSession().run('Pay INV-7 and tell the vendor', { runState: { checkpoints: store1, definitionRevision: '2026-12-01' } })
store1.close()
console.log('status:', suspended.status, '| version:', suspended.runState.version, '| side effects so far:', sent.length)
for (const p of suspended.interruption.pendingDecisions) console.log('  waiting:', p.scope.toolName, p.approvalId, 'args', p.scope.argumentsHash.slice(0, 12) + '…')
const [pay, mail] = suspended.interruption.pendingDecisions
const ref = { runId: suspended.runId, sessionId: suspended.sessionId }

// Process 2 (a fresh store object over the same file): the reviewer decides.
const requests = []
const second = agentWith([[providerTextDelta('Paid 400 on INV-7 and told the vendor.'), providerDone()]], requests)
const store2 = createSqliteCheckpointStore({ path })
const options = { checkpoints: store2, definitionRevision: '2026-12-01' }
try {
  await resumeAgentRun(second, ref, { decisions: [{ approvalId: pay.approvalId, outcome: 'allow_once', modifiedArguments: { invoice: 'INV-7', amount: 5000 } }], expectedVersion: 1 }, options)
} catch (err) {
  if (!(err instanceof AgentDecisionError)) throw err
  console.log('refused:', err.code, '-', err.message, '| side effects:', sent.length)
}
const partial = await resumeAgentRun(second, ref, { decisions: [{ approvalId: mail.approvalId, outcome: 'allow_for_run' }], expectedVersion: 1 }, options)
console.log('after one decision:', partial.status, '| still waiting:', partial.interruption.pendingDecisions.map((p) => p.scope.toolName).join(', '))
const done = await resumeAgentRun(second, ref, { decisions: [{ approvalId: pay.approvalId, outcome: 'allow_once', modifiedArguments: { invoice: 'INV-7', amount: 400 } }], expectedVersion: partial.runState.version }, options)
console.log('final:', done.status, '-', done.text)
console.log('side effects:', sent)
const rows = requests[0].messages.filter((m) => m.role === 'tool').map((m) => `${m.content[0].name} → ${JSON.stringify(m.content[0].result)}`)
console.log('the next provider request carried:', rows)
store2.close()
rmSync(dir, { recursive: true, force: true })
