import type { ZodType } from 'zod'
import { fieldPath, joinField, type ValidationIssue } from '../errors/issue.js'

/**
 * Checks event data against a payload schema, as `append` does before the surface and structure
 * rules. The parse result is discarded: the committed data is the caller's snapshot, never zod's
 * output. An unknown key is reported once per key, at the key itself (`path` ends with it).
 *
 * @param schema - a synchronous zod schema
 * @param data - the lossless-JSON payload
 * @returns the issues in zod's order (the first one is what `INVALID_PAYLOAD.path` names), or
 *   `undefined` when the data is valid
 * @throws the zod error for a schema with asynchronous refinements (a plugin bug)
 * @example
 * ```ts
 * const issues = payloadIssues(schema, data)
 * if (issues !== undefined) throw new SessionEventError({ code: 'INVALID_PAYLOAD', path: accessPath('data', issues[0].path), issues })
 * ```
 */
export function payloadIssues(schema: ZodType, data: unknown): ValidationIssue[] | undefined {
  const result = schema.safeParse(data)
  if (result.success) return undefined
  const issues: ValidationIssue[] = []
  for (const issue of result.error.issues) {
    const path = issue.path.map((part) => (typeof part === 'number' ? part : String(part)))
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) issues.push({ path: [...path, key], message: `unknown key "${key}"` })
      continue
    }
    issues.push({ path, message: issue.message })
  }
  return issues
}

/**
 * Renders a path in JS access syntax from a root name: `data.message.content[0].toolCallId`; a key
 * that is not an identifier is quoted (`data["a-b"]`).
 *
 * @param root - the name of the root value, e.g. `'data'` or `'options'`
 * @param path - keys and indexes from the root
 * @returns the access expression; `root` itself for an empty path
 */
export function accessPath(root: string, path: readonly (string | number)[]): string {
  return joinField(root, fieldPath(path))
}
