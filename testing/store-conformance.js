'use strict'
// What the store conformance kits share: the Error naming the kit and the first broken rule, and the
// check that a call is refused with the store's conflict code. Internal to the kits (not an export).

/**
 * @param {string} kit the contract's name, e.g. `CheckpointStore`
 * @param {string} conflictCode the `code` a refused compare-and-swap carries
 */
function conformanceChecks(kit, conflictCode) {
  function fail(message) {
    throw new Error(`${kit} conformance: ${message}`)
  }

  async function expectConflict(run, message) {
    let error
    try {
      await run()
    } catch (e) {
      error = e
    }
    if (error === undefined) fail(message)
    if (error?.code !== conflictCode) fail(`${message} (expected ${conflictCode}, got ${String(error && error.code)})`)
  }

  return { fail, expectConflict }
}

module.exports = { conformanceChecks }
