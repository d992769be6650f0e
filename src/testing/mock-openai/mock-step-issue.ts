import { mockFaultNames } from './mock-step.js'

type Fields = Readonly<Record<string, unknown>>

const isObject = (value: unknown): value is Fields =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
const isStatus = (value: unknown): boolean =>
  Number.isInteger(value) && (value as number) >= 100 && (value as number) <= 599
const isCount = (value: unknown): boolean => Number.isSafeInteger(value) && (value as number) >= 0
const isDelay = (value: unknown): boolean => typeof value === 'number' && Number.isFinite(value) && value >= 0

function replyIssue(step: Fields): string | undefined {
  for (const key of ['text', 'reasoning'] as const) {
    if (step[key] !== undefined && typeof step[key] !== 'string') return `${key} must be a string`
  }
  const chunkSize = step['chunkSize']
  if (chunkSize !== undefined && !(Number.isSafeInteger(chunkSize) && (chunkSize as number) > 0)) {
    return 'chunkSize must be a positive safe integer'
  }
  for (const key of ['delayMs', 'chunkDelayMs'] as const) {
    if (step[key] !== undefined && !isDelay(step[key])) return `${key} must be a finite number >= 0`
  }
  const toolCalls = step['toolCalls']
  if (toolCalls === undefined) return undefined
  if (!Array.isArray(toolCalls)) return 'toolCalls must be an array'
  const bad = toolCalls.findIndex((call: unknown) => !isObject(call) || typeof call['name'] !== 'string')
  return bad === -1 ? undefined : `toolCalls[${bad}] must be an object with a string name`
}

function faultIssue(step: Fields, fault: unknown): string | undefined {
  if (typeof fault !== 'string' || !(mockFaultNames as readonly string[]).includes(fault)) {
    return `fault must be one of ${mockFaultNames.join(', ')}`
  }
  if (step['afterEvents'] !== undefined && !isCount(step['afterEvents']))
    return 'afterEvents must be a safe integer >= 0'
  if (fault === 'rate-limit' && step['retryAfter'] !== undefined && typeof step['retryAfter'] !== 'string') {
    return 'retryAfter must be a string'
  }
  if ((fault === 'server-error' && step['status'] !== undefined) || fault === 'http') {
    if (!isStatus(step['status'])) return 'status must be an integer from 100 to 599'
  }
  if (fault === 'http' && step['headers'] !== undefined) {
    const headers = step['headers']
    if (!isObject(headers) || Object.values(headers).some((value) => typeof value !== 'string')) {
      return 'headers must be an object of strings'
    }
  }
  return replyIssue(step)
}

/**
 * Checks the shape of one mock script step (what TypeScript cannot check for a JavaScript caller
 * or a script function's result).
 *
 * @param step - the step
 * @returns what is wrong, or `undefined` for a usable step
 */
export function mockStepIssue(step: unknown): string | undefined {
  if (!isObject(step)) return 'must be an object'
  if (step['fault'] !== undefined) return faultIssue(step, step['fault'])
  if (step['events'] !== undefined) return Array.isArray(step['events']) ? undefined : 'events must be an array'
  return replyIssue(step)
}
