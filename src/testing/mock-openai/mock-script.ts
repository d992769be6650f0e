import type { JsonValue } from '../../session/json-value.js'
import type { MockStep } from './mock-step.js'

/**
 * A script function: called once per accepted request with the parsed JSON body, the 0-based
 * number of earlier calls and the value of the session id header (`undefined` without one).
 * Returning `undefined` means the script is exhausted for this request. A throw, a rejection or an
 * invalid step answers the request with a 500 `script_error` body and makes `assertComplete()`
 * throw that error.
 */
export type MockScriptFunction = (
  body: JsonValue,
  index: number,
  sessionId: string | undefined,
) => MockStep | undefined | Promise<MockStep | undefined>

/**
 * The script of a mock OpenAI server: a list of steps (one per accepted request, in order), lists
 * keyed by the value of the session id header (concurrent sessions never consume each other's
 * steps; a request without the header, or with an unknown value, finds the script exhausted), or a
 * function of the request (`MockScriptFunction`).
 */
export type MockScript = readonly MockStep[] | Readonly<Record<string, readonly MockStep[]>> | MockScriptFunction
