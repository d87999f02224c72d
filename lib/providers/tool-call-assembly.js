'use strict'
// Tool calls assembled from streamed pieces: the one rule set for every stream that sends calls in
// pieces (Chat Completions `delta.tool_calls[]`, and the provider protocol's `tool_call_delta`
// events that `reconstructToolCallDeltas` rebuilds), for servers that follow the wire format loosely.
//
// A piece joins the call with its `id`; else the call at its `index`, unless that call has another
// `id` (servers that number every call 0 start a new call that way); a piece with neither continues
// the call before it. A name is normally sent once, sometimes split in pieces, sometimes repeated
// whole in every piece: a piece equal to the name held so far, or the whole name again (it starts
// with what is held), is not appended. A call's `id` and `index` are the first seen.
//
// Anthropic `tool_use` blocks are kept in the order they start: a block is never replaced by another
// at the same (or no) `index`; deltas and stops go to the block open at their index, else to the
// last open one. A start block's whole `input` is used when no `input_json_delta` follows.

/** The name after a streamed name piece. */
function mergeToolName(held, piece) {
  if (typeof piece !== 'string' || piece === '') return held
  if (held === undefined || held === '') return piece
  if (piece === held) return held
  if (piece.startsWith(held)) return piece
  return held + piece
}

/**
 * Calls from normalized pieces `{ id, index, name, text }` (each field optional). `maxTextLength`
 * stops a call's text from growing once it is past that many UTF-16 units: such text is refused
 * by its byte bound anyway, and one unit over is enough to say so.
 */
function createToolCallAssembler(maxTextLength = Infinity) {
  const calls = []
  const byIndex = new Map()
  const byId = new Map()
  let last
  return {
    /** Adds one piece; answers the call it joined, with `position` (0-based, in arrival order). */
    add(id, index, name, text) {
      if (id === '') id = undefined
      let call
      if (id !== undefined) call = byId.get(id)
      if (call === undefined && index !== undefined) {
        const atIndex = byIndex.get(index)
        // The same index under another id is another call.
        if (atIndex !== undefined && (id === undefined || atIndex.id === undefined || atIndex.id === id)) call = atIndex
      }
      if (call === undefined && index === undefined && id === undefined) call = last
      if (call === undefined) {
        call = { position: calls.length, id: undefined, index, name: undefined, argumentsText: '' }
        calls.push(call)
      }
      if (index !== undefined) byIndex.set(index, call)
      if (id !== undefined) {
        if (call.id === undefined) call.id = id
        byId.set(id, call)
      }
      call.name = mergeToolName(call.name, name)
      if (typeof text === 'string' && call.argumentsText.length <= maxTextLength) call.argumentsText += text
      last = call
      return call
    },
    calls,
  }
}

/** The assembler over Chat Completions `delta.tool_calls[]` pieces. */
function createChatToolCallAssembler() {
  const assembler = createToolCallAssembler()
  return {
    add(piece) {
      if (piece === null || typeof piece !== 'object') return undefined
      const fn = piece.function !== null && typeof piece.function === 'object' ? piece.function : {}
      const id = typeof piece.id === 'string' ? piece.id : undefined
      const index = Number.isInteger(piece.index) ? piece.index : undefined
      return assembler.add(id, index, fn.name, fn.arguments)
    },
    calls: assembler.calls,
  }
}

function createAnthropicToolBlockAssembler() {
  const blocks = [] // tool_use blocks, in the order they started
  const open = new Map() // index -> the block of any type started there and not stopped
  let last // the last block started, of any type
  const target = (index) => (index !== undefined && open.has(index) ? open.get(index) : last)
  return {
    /** A `content_block_start`; a non-tool block is tracked only so its stop and deltas find it. */
    start(index, block) {
      let entry
      // A `server_tool_use` (the provider's own tool search) is assembled the same way and
      // answered as a provider-hosted call.
      if (block.type === 'tool_use' || block.type === 'server_tool_use') {
        const input = block.input
        entry = {
          tool: true,
          hosted: block.type === 'server_tool_use',
          position: blocks.length,
          id: typeof block.id === 'string' && block.id !== '' ? block.id : undefined,
          name: typeof block.name === 'string' && block.name !== '' ? block.name : undefined,
          argumentsText: '',
          sawDelta: false,
          // The start block's `input` (usually `{}`); whole when a server sends no deltas.
          startInput: input !== null && typeof input === 'object' && !Array.isArray(input) ? input : undefined,
          complete: false,
        }
        blocks.push(entry)
      } else entry = { tool: false, complete: false }
      if (index !== undefined) open.set(index, entry)
      last = entry
      return entry
    },
    /** An `input_json_delta` piece; answers the tool block it joined, or undefined when none is open there. */
    delta(index, text) {
      const entry = target(index)
      if (entry === undefined || !entry.tool || entry.complete) return undefined
      entry.sawDelta = true
      if (typeof text === 'string') entry.argumentsText += text
      return entry
    },
    stop(index) {
      const entry = target(index)
      if (entry === undefined) return
      entry.complete = true
      if (index !== undefined && open.get(index) === entry) open.delete(index)
    },
    blocks,
  }
}

/** The argument text a finished Anthropic block runs with. */
function anthropicArgumentsText(entry) {
  if (entry.sawDelta && entry.argumentsText !== '') return entry.argumentsText
  if (entry.startInput !== undefined) return JSON.stringify(entry.startInput)
  return entry.argumentsText
}

module.exports = { mergeToolName, createToolCallAssembler, createChatToolCallAssembler, createAnthropicToolBlockAssembler, anthropicArgumentsText }
