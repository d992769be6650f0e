/** One validation problem: where it is (a path of keys and indexes) and what is wrong. */
export interface ValidationIssue {
  /** The path to the offending value, e.g. `['tools', 0, 'name']`; empty for the root. */
  readonly path: readonly (string | number)[]
  /** What is wrong, e.g. `'must be a positive integer'`. */
  readonly message: string
}

/**
 * Renders a path the way messages show it: `maxParallelToolCalls`, `tools.0.name`.
 *
 * @internal
 */
export function dottedPath(path: readonly (string | number)[]): string {
  return path.map(String).join('.')
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
