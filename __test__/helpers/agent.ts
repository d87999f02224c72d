// Small helpers shared by the agent suites: what a failed run left, and a streamed run's events.
import { AgentRunError, type AgentEvent } from "../../index.mjs";

/** The AgentRunError a failed or aborted run rejects with; any other rejection is rethrown. */
export async function runError(run: Promise<unknown>): Promise<AgentRunError> {
  try {
    await run;
  } catch (e) {
    if (e instanceof AgentRunError) return e;
    throw e;
  }
  throw new Error("the run did not fail");
}

/** The result a failed or aborted run carries (`AgentRunError.result`). */
export async function failure(run: Promise<unknown>): Promise<any> {
  return (await runError(run)).result;
}

/** Every event of `session.stream(input, options)`, in order. */
export async function streamEvents(
  session: { stream(input: string, options?: object): AsyncIterable<AgentEvent> },
  input: string,
  options?: object,
): Promise<AgentEvent[]> {
  const events: AgentEvent[] = [];
  for await (const e of session.stream(input, options)) events.push(e);
  return events;
}
