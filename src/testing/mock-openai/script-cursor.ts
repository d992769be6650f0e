import { InvalidArgumentError } from '../../errors/invalid-argument-error.js'
import type { ValidationIssue } from '../../errors/issue.js'
import type { JsonValue } from '../../session/json-value.js'
import type { MockScript, MockScriptFunction } from './mock-script.js'
import type { MockStep } from './mock-step.js'
import { mockStepIssue } from './mock-step-issue.js'

/** What the script gives one request. */
export type ScriptTake =
  | { readonly kind: 'step'; readonly step: MockStep }
  | { readonly kind: 'exhausted' }
  | { readonly kind: 'error'; readonly message: string }

/** Hands out a {@link MockScript}'s steps and counts what was left over or missing. */
export interface ScriptCursor {
  /**
   * Takes the step for a request.
   *
   * @param body - the parsed request body
   * @param sessionId - the session id header's value
   * @returns the step, or why there is none
   */
  take(body: JsonValue, sessionId: string | undefined): Promise<ScriptTake>
  /** How many requests found the script exhausted. */
  readonly overrun: number
  /** How many list steps are still unused (0 for a function script). */
  readonly remaining: number
  /** The first error a script function threw or the first invalid step it returned. */
  readonly failure: { readonly error: unknown } | undefined
}

/**
 * Lists what is wrong with a script given as an option.
 *
 * @param script - the `script` option
 * @returns the issues, with paths under `script`
 */
export function scriptIssues(script: unknown): ValidationIssue[] {
  if (typeof script === 'function') return []
  const listIssues = (steps: unknown, path: readonly (string | number)[]): ValidationIssue[] => {
    if (!Array.isArray(steps)) return [{ path, message: 'must be an array of mock steps' }]
    return steps.flatMap((step: unknown, index) => {
      const message = mockStepIssue(step)
      return message === undefined ? [] : [{ path: [...path, index], message }]
    })
  }
  if (Array.isArray(script)) return listIssues(script, ['script'])
  if (typeof script !== 'object' || script === null) {
    return [{ path: ['script'], message: 'must be an array of steps, an object of step arrays or a function' }]
  }
  return Object.entries(script).flatMap(([key, steps]) => listIssues(steps, ['script', key]))
}

const errorText = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/**
 * Creates a cursor over a validated script.
 *
 * @param script - the script
 * @returns the cursor
 */
export function createScriptCursor(script: MockScript): ScriptCursor {
  const positions = new Map<string | undefined, number>()
  let overrun = 0
  let calls = 0
  let failure: { readonly error: unknown } | undefined
  const lists: ReadonlyMap<string | undefined, readonly MockStep[]> | undefined =
    typeof script === 'function'
      ? undefined
      : Array.isArray(script)
        ? new Map([[undefined, script as readonly MockStep[]]])
        : new Map(Object.entries(script as Readonly<Record<string, readonly MockStep[]>>))
  const keyed = lists !== undefined && !Array.isArray(script)

  const fromFunction = async (
    run: MockScriptFunction,
    body: JsonValue,
    sessionId: string | undefined,
  ): Promise<ScriptTake> => {
    let step: MockStep | undefined
    try {
      step = await run(body, calls++, sessionId)
    } catch (error) {
      failure ??= { error }
      return { kind: 'error', message: errorText(error) }
    }
    if (step === undefined) {
      overrun += 1
      return { kind: 'exhausted' }
    }
    const issue = mockStepIssue(step)
    if (issue === undefined) return { kind: 'step', step }
    const error = new InvalidArgumentError({ argument: 'mock step', reason: issue, value: step })
    failure ??= { error }
    return { kind: 'error', message: error.message }
  }

  return {
    take: async (body, sessionId) => {
      if (lists === undefined) return fromFunction(script as MockScriptFunction, body, sessionId)
      const key = keyed ? sessionId : undefined
      const steps = lists.get(key)
      const position = positions.get(key) ?? 0
      const step = steps?.[position]
      if (step === undefined) {
        overrun += 1
        return { kind: 'exhausted' }
      }
      positions.set(key, position + 1)
      return { kind: 'step', step }
    },
    get overrun() {
      return overrun
    },
    get remaining() {
      if (lists === undefined) return 0
      let left = 0
      for (const [key, steps] of lists) left += steps.length - (positions.get(key) ?? 0)
      return left
    },
    get failure() {
      return failure
    },
  }
}
