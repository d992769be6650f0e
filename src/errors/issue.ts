/** One validation problem: where it is (a path of keys and indexes) and what is wrong. */
export interface ValidationIssue {
  /** The path to the offending value, e.g. `['tools', 0, 'name']`; empty for the root. */
  readonly path: readonly (string | number)[]
  /** What is wrong, e.g. `'must be a positive integer'`. */
  readonly message: string
}

const identifier = /^[A-Za-z_$][A-Za-z0-9_$]*$/

/**
 * Renders a path the way every error message and `field` property shows it, in JS access syntax:
 * `maxParallelToolCalls`, `tools[0].name`, `messages[2].content[0].text`; a key that is not an
 * identifier is quoted (`headers["x-trace"]`). One form everywhere, so a path read in one error can
 * be searched for in another.
 *
 * @param path - keys and indexes from the root (a symbol key shows as `[Symbol(name)]`); empty for the root itself
 * @returns the rendered path; `''` for the root
 * @internal
 */
export function fieldPath(path: readonly PropertyKey[]): string {
  let text = ''
  for (const part of path) {
    if (typeof part === 'number') text += `[${part}]`
    else if (typeof part === 'symbol') text += `[${part.toString()}]`
    else if (identifier.test(part)) text += text === '' ? part : `.${part}`
    else text += `[${JSON.stringify(part)}]`
  }
  return text
}

/**
 * Appends a rendered {@link fieldPath} to a field name: `joinField('messages[0]', 'role')` is
 * `'messages[0].role'`, `joinField('tools', '[1].name')` is `'tools[1].name'`.
 *
 * @param field - the rendered parent path; `''` for the root
 * @param relative - a rendered path relative to it; `''` for the parent itself
 * @returns the joined path
 * @internal
 */
export function joinField(field: string, relative: string): string {
  if (relative === '') return field
  if (field === '' || relative.startsWith('[')) return `${field}${relative}`
  return `${field}.${relative}`
}

/**
 * The value at `path` inside `root` (`undefined` when the path leaves the objects): what an issue's
 * error reports as the offending value.
 *
 * @internal
 */
export function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let current = root
  for (const part of path) {
    if (typeof current !== 'object' || current === null) return undefined
    current = (current as Readonly<Record<PropertyKey, unknown>>)[part]
  }
  return current
}
