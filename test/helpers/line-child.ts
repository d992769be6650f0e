/**
 * A long-running child process that prints one JSON object per line (the lease holders of the
 * lease and CLI tests): its lines as they come, a wait for a condition on them, and its exit.
 */
import { type ChildProcess, spawn } from 'node:child_process'

/** A running child and what it printed so far. */
export interface LineChild {
  /** The process. */
  readonly process: ChildProcess
  /** Every JSON line printed so far, parsed. */
  readonly lines: Record<string, unknown>[]
  /** Resolves with the exit code (`null` after a signal) once it exited. */
  readonly exited: Promise<number | null>
  /** Waits (up to 10 s) until `condition` holds; rejects naming `what` and the child's stderr. */
  waitFor(condition: () => boolean, what: string): Promise<void>
}

/**
 * Starts `node <file> <argument>` (without vitest's `NODE_OPTIONS`).
 *
 * @param file - a bundled entry
 * @param argument - its one argument
 * @returns the child
 */
export function startLineChild(file: string, argument: string): LineChild {
  const env: NodeJS.ProcessEnv = { ...process.env }
  delete env['NODE_OPTIONS']
  const child = spawn(process.execPath, [file, argument], { env, stdio: ['ignore', 'pipe', 'pipe'] })
  const lines: Record<string, unknown>[] = []
  let stderr = ''
  let buffered = ''
  child.stdout.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8')
    const parts = buffered.split('\n')
    buffered = parts.pop() ?? ''
    for (const part of parts) if (part !== '') lines.push(JSON.parse(part) as Record<string, unknown>)
  })
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')))
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  return {
    process: child,
    lines,
    exited,
    waitFor: async (condition, what) => {
      const deadline = Date.now() + 10_000
      while (!condition()) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; stderr: ${stderr}`)
        await new Promise((resolve) => setTimeout(resolve, 5))
      }
    },
  }
}
