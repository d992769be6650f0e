import { type OptionRule, optionRule } from '../kernel/option-issues.js'
import { queuedPolicyRule } from './resume-agent.js'

const setupRule: OptionRule = (value) =>
  typeof value === 'function' ? undefined : 'must be a function (ctx) => void | Promise<void>'

/** The rules create and resume share. */
const SHARED_RULES: Readonly<Record<string, OptionRule>> = Object.freeze({
  options: optionRule.any,
  preset: optionRule.string,
  model: optionRule.any,
  setup: setupRule,
  signal: optionRule.signal,
})

/**
 * The rules of `agents.resume` options: `preset` a string,
 * `setup` a function, `signal` an `AbortSignal`, `queued` `'keep'` or `'discard'`; `options` and
 * `model` are checked by their own validators later.
 *
 * @internal
 */
export const RESUME_AGENT_RULES: Readonly<Record<string, OptionRule>> = Object.freeze({
  ...SHARED_RULES,
  queued: queuedPolicyRule,
})

/**
 * The rules of `agents.create` options: those of resume but `queued`, plus `id` a string, `seed` an array
 * (its events are checked by the seeded construction) and `meta` a plain object (checked as
 * JSON by the header).
 *
 * @internal
 */
export const CREATE_AGENT_RULES: Readonly<Record<string, OptionRule>> = Object.freeze({
  id: optionRule.string,
  ...SHARED_RULES,
  seed: (value) => (Array.isArray(value) ? undefined : 'must be an array of session events'),
  meta: (value) =>
    optionRule.plainObject(value) === undefined
      ? undefined
      : 'must be a plain JSON object (stored as the session header metadata)',
})
