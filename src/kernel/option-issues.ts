import { InvalidArgumentError } from '../errors/invalid-argument-error.js'
import { InvalidOptionsError } from '../errors/invalid-options-error.js'
import { fieldPath, joinField, type ValidationIssue, valueAt } from '../errors/issue.js'
import { isAbortSignal } from './is-abort-signal.js'
import { isPlainObject } from './is-plain-object.js'

/** What one option's value must be: the issue message when it is not, `undefined` when it is. */
export type OptionRule = (value: unknown) => string | undefined

/** The rules options checks share (a set value is checked; an `undefined` one never is). @internal */
export const optionRule = Object.freeze({
  any: (): undefined => undefined,
  string: (value: unknown) => (typeof value === 'string' ? undefined : 'must be a string'),
  boolean: (value: unknown) => (typeof value === 'boolean' ? undefined : 'must be a boolean'),
  nonEmptyString: (value: unknown) =>
    typeof value === 'string' && value.length > 0 ? undefined : 'must be a non-empty string',
  function: (value: unknown) => (typeof value === 'function' ? undefined : 'must be a function'),
  signal: (value: unknown) => (isAbortSignal(value) ? undefined : 'must be an AbortSignal'),
  array: (value: unknown) => (Array.isArray(value) ? undefined : 'must be an array'),
  plainObject: (value: unknown) => (isPlainObject(value) ? undefined : 'must be a plain object'),
  clock: (value: unknown) =>
    hasMethods(value, ['now', 'setTimer']) ? undefined : 'must be a Clock { now(), setTimer() }',
} satisfies Record<string, OptionRule>)

/**
 * Whether `value` is an object with a function at each of `methods` (a duck-typed service: a
 * clock, a logger, a file system).
 *
 * @param value - anything
 * @param methods - the method names
 * @returns whether every method is there
 * @internal
 */
export function hasMethods(value: unknown, methods: readonly string[]): boolean {
  if (typeof value !== 'object' || value === null) return false
  const record = value as Readonly<Record<string, unknown>>
  return methods.every((method) => typeof record[method] === 'function')
}

/**
 * The issues of an options object: not an object → one issue at the root
 * (`must be an options object <shape>`); each unknown key → `unknown option`; each set key whose
 * rule fails → that rule's message; then each `required` key left `undefined` → `is required`.
 * Paths are `[key]`, in the order of the options' keys, then of `required`.
 *
 * @param options - what the caller passed (`undefined` has no issue, unless keys are required)
 * @param rules - the allowed keys and their rules
 * @param shape - names the expected shape in the root issue, e.g. `'{ signal? }'`
 * @param required - keys that must be set (their values still go through their rules)
 * @returns the issues, empty when the options are fine
 * @internal
 */
export function optionIssues(
  options: unknown,
  rules: Readonly<Record<string, OptionRule>>,
  shape: string,
  required: readonly string[] = [],
): ValidationIssue[] {
  if (options === undefined && required.length === 0) return []
  if (typeof options !== 'object' || options === null || Array.isArray(options))
    return [{ path: [], message: `must be an options object ${shape}` }]
  const record = options as Readonly<Record<string, unknown>>
  const issues: ValidationIssue[] = []
  for (const key of Object.keys(record)) {
    const rule = Object.hasOwn(rules, key) ? rules[key] : undefined
    const value = record[key]
    const message = rule === undefined ? 'unknown option' : value === undefined ? undefined : rule(value)
    if (message !== undefined) issues.push({ path: [key], message })
  }
  for (const key of required) if (record[key] === undefined) issues.push({ path: [key], message: 'is required' })
  return issues
}

/**
 * Throws `issues`, when there are any, as one {@link InvalidOptionsError} whose `value` is the
 * first issue's value in `options`.
 *
 * @param issues - from {@link optionIssues} and any checks of the caller's own
 * @param options - what the caller passed
 * @param subject - the name the message starts with (`'options'` by default)
 * @throws {@link InvalidOptionsError}
 * @internal
 */
export function throwOptionIssues(issues: readonly ValidationIssue[], options: unknown, subject?: string): void {
  const [first] = issues
  if (first === undefined) return
  throw new InvalidOptionsError({
    issues,
    value: valueAt(options, first.path),
    ...(subject === undefined ? {} : { subject }),
  })
}

/**
 * {@link optionIssues}, thrown: every issue in one {@link InvalidOptionsError} whose `value` is the
 * first issue's value.
 *
 * @param options - what the caller passed (`undefined` → `{}`)
 * @param rules - the allowed keys and their rules
 * @param shape - names the expected shape in the root issue
 * @param subject - the name the message starts with (`'options'` by default)
 * @returns `options` as an object
 * @throws {@link InvalidOptionsError}
 * @internal
 */
export function checkOptions<T extends object>(
  options: T | undefined,
  rules: Readonly<Record<string, OptionRule>>,
  shape: string,
  subject?: string,
): T {
  throwOptionIssues(optionIssues(options, rules, shape), options, subject)
  return options ?? ({} as T)
}

/**
 * {@link optionIssues} for the options of a method (a positional argument):
 * the first issue thrown as an {@link InvalidArgumentError} whose `argument` is `options` or
 * `options.<key>`.
 *
 * @param options - what the caller passed (`undefined` → `{}`)
 * @param rules - the allowed keys and their rules
 * @param shape - names the expected shape in the root issue
 * @returns `options` as an object
 * @throws {@link InvalidArgumentError}
 * @internal
 */
export function checkOptionsArgument<T extends object>(
  options: T | undefined,
  rules: Readonly<Record<string, OptionRule>>,
  shape: string,
): T {
  const [issue] = optionIssues(options, rules, shape)
  if (issue !== undefined) {
    throw new InvalidArgumentError({
      argument: joinField('options', fieldPath(issue.path)),
      reason: issue.message,
      value: valueAt(options, issue.path),
    })
  }
  return options ?? ({} as T)
}
