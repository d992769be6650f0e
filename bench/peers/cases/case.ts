/**
 * What every runtime in the peers bench implements: a runtime (created once per child process) that
 * opens conversations, and a conversation that runs turns. Every turn is the same two steps: the
 * fake model asks for the `lookup` tool, the tool answers, the fake model answers with text.
 */

/** One conversation of a runtime; `turn` runs one user turn to its end (both steps). */
export interface Conversation {
  turn(input: string): Promise<void>
  /** Ends the conversation the way the runtime ends one (dispose, delete the thread, close the file). */
  close(): Promise<void>
}

/** A runtime set up once per child process. */
export interface Runtime {
  conversation(): Promise<Conversation>
  close(): Promise<void>
}

/** The steps of one turn: a tool call, then a text answer. */
export const STEPS_PER_TURN = 2

/** The tool every runtime registers: one string argument, a constant answer. */
export const TOOL_NAME = 'lookup'
export const TOOL_DESCRIPTION = 'Looks a word up'
export const TOOL_ANSWER = 'found it'
/** The arguments the fake model sends, as JSON text. */
export const TOOL_ARGUMENTS = '{"query":"weather"}'
/** The final answer of every turn. */
export const ANSWER = 'done'

/** Throws when a turn did not end the way the script says (so a broken case cannot look fast). */
export function expectAnswer(runtime: string, text: string | undefined, expected = ANSWER): void {
  if (text !== expected)
    throw new Error(`${runtime}: the turn ended with ${JSON.stringify(text)}, not ${JSON.stringify(expected)}`)
}
