'use strict'
// Redaction of streamed text. A provider splits its text into deltas anywhere, a secret included:
// redacting each delta alone would let `"key is sk-ab"` and `"cd…"` through, each harmless, the two
// together the secret. A stream redactor holds back the end of the text that could still become a
// secret and lets out only a prefix no later delta can change, redacted; `flush()` lets out the rest.
//
// With the secrets known, the cut follows the redactor's own matching (leftmost-longest, as the
// native Aho-Corasick automaton of crates/core/src/redact.rs): the text before the cut is decided whatever
// comes next, so the pieces let out, joined, are exactly the whole text redacted at once, and at
// most (longest secret − 1) characters are ever held. With an opaque redactor (a host's `redact`
// whose secrets are unknown) nothing is safe before the end: every delta is held and `flush()`
// lets out the whole text redacted at once.

// Redactors whose secrets are known (made here for the agent, or registered by their maker).
const KNOWN = new WeakMap()

/** Records that `redactor` redacts exactly `secrets` (so its streams need not be held whole). */
function registerRedactorSecrets(redactor, secrets) {
  if (redactor !== null && typeof redactor === 'object' && Array.isArray(secrets)) KNOWN.set(redactor, secrets.filter((s) => typeof s === 'string' && s !== ''))
  return redactor
}

/** The secrets a redactor is known to redact, or undefined for an opaque one. */
function redactorSecrets(redactor) {
  return redactor !== null && typeof redactor === 'object' ? KNOWN.get(redactor) : undefined
}

/**
 * A stream redactor: `push(delta)` answers the redacted text that may go out now ('' while all of
 * it is held), `flush()` the redacted rest at the end; `held` is the number of characters held.
 * `secrets` (strings; empty ones ignored) make it incremental; without them it holds everything.
 * `redact(text)` is the redactor applied to whole text.
 */
function createStreamRedactor({ secrets, redact }) {
  if (typeof redact !== 'function') throw new TypeError('createStreamRedactor: redact must be a function')
  const list = Array.isArray(secrets) ? [...new Set(secrets.filter((s) => typeof s === 'string' && s !== ''))] : undefined
  const firsts = list === undefined ? undefined : new Set(list.map((s) => s.charCodeAt(0)))
  let pending = ''

  // Where the decided prefix of `s` ends: the first position where a secret may still begin.
  function cut(s) {
    let i = 0
    while (i < s.length) {
      if (!firsts.has(s.charCodeAt(i))) {
        i += 1
        continue
      }
      let longest = 0
      let open = false
      const rest = s.length - i
      for (const secret of list) {
        if (secret.length <= rest) {
          if (secret.length > longest && s.startsWith(secret, i)) longest = secret.length
        } else if (!open && secret.startsWith(s.slice(i))) open = true
      }
      // A longer secret may still complete here: leftmost-longest cannot decide yet.
      if (open) return i
      i += longest > 0 ? longest : 1
    }
    return i
  }

  return {
    push(delta) {
      if (typeof delta !== 'string' || delta === '') return ''
      const s = pending + delta
      if (list === undefined) {
        pending = s
        return ''
      }
      if (list.length === 0) {
        pending = ''
        return s
      }
      const at = cut(s)
      pending = s.slice(at)
      return at === 0 ? '' : redact(s.slice(0, at))
    },
    flush() {
      const s = pending
      pending = ''
      if (s === '') return ''
      return list !== undefined && list.length === 0 ? s : redact(s)
    },
    get held() {
      return pending.length
    },
  }
}

// Block types whose `text` streams: each type is its own stream within a turn.
const STREAMED = new Set(['text', 'thinking'])

/**
 * The redaction of one provider turn's content. `block(b)` answers the block to emit in place of
 * `b` (a text block with the safe part of its text; undefined when all of it is held); `finish()`
 * answers the blocks holding the redacted rest. `content` is the turn's content as it may be kept
 * and shown: its text joined is the turn's whole text redacted at once. Other blocks pass
 * unchanged (the caller redacts them as whole values).
 */
function createTurnRedaction(redactor, redactWith) {
  const secrets = redactorSecrets(redactor)
  const redact = (text) => {
    const out = redactWith(text, redactor)
    return typeof out === 'string' ? out : String(out)
  }
  const streams = new Map()
  const content = []
  return {
    content,
    block(b) {
      if (b === null || typeof b !== 'object' || !STREAMED.has(b.type) || typeof b.text !== 'string') {
        content.push(b)
        return b
      }
      let entry = streams.get(b.type)
      if (entry === undefined) {
        entry = { stream: createStreamRedactor({ secrets, redact }) }
        streams.set(b.type, entry)
      }
      const text = entry.stream.push(b.text)
      if (text === '') return undefined
      const safe = { ...b, text }
      content.push(safe)
      return safe
    },
    /** A tool call with its model-chosen `id` and `name` redacted (the same block when neither changes). */
    call(b) {
      const id = typeof b.id === 'string' ? redact(b.id) : b.id
      const name = typeof b.name === 'string' ? redact(b.name) : b.name
      return id === b.id && name === b.name ? b : { ...b, id, name }
    },
    finish() {
      const out = []
      for (const [type, entry] of streams) {
        const text = entry.stream.flush()
        if (text === '') continue
        const block = { type, text }
        out.push(block)
        content.push(block)
      }
      streams.clear()
      return out
    },
  }
}

module.exports = { createStreamRedactor, createTurnRedaction, registerRedactorSecrets, redactorSecrets }
