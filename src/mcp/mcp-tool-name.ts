import { createHash } from 'node:crypto'

/** The tool names every provider accepts: what `defineTool` allows. */
const MODEL_NAME = /^[A-Za-z0-9_-]{1,64}$/
const MAX_LENGTH = 64
const HASH_LENGTH = 8

/** Why a mounted tool's name differs from the server's name for it. */
export type McpRenameReason = 'invalid-name' | 'collision'

/** A short, stable hex hash of `text` (the same text gives the same suffix in every process). */
function shortHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, HASH_LENGTH)
}

/**
 * The model-facing name for a tool name: itself when providers accept it, otherwise its refused
 * characters replaced by `_`, cut to fit, and a short hash of the whole original appended, so two
 * names that clean up alike still differ and the name never changes between runs.
 *
 * @param name - the name to expose (a tool's name, or `server_tool` after a collision)
 * @returns a name of 1–64 characters of `[A-Za-z0-9_-]`
 * @internal
 */
export function modelToolName(name: string): string {
  if (MODEL_NAME.test(name)) return name
  const cleaned = name.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, MAX_LENGTH - HASH_LENGTH - 1)
  return `${cleaned}_${shortHash(name)}`
}
