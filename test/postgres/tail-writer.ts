/**
 * Starts the writer child of the tail tests (`tail-writer-child.ts`, bundled once per test file)
 * and drives it: run turns, wait for the lines it prints, exit.
 *
 * @module
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { type Bundle, bundle } from '../helpers/child-process.js'
import type { TailWriterOptions } from './tail-writer-child.js'

let made: Promise<Bundle> | undefined

/** A running writer. */
export interface TailWriter {
  readonly process: ChildProcess
  /** The JSON lines it printed so far. */
  readonly lines: Record<string, unknown>[]
  /** Runs `count` turns; resolves with the session's length after the last one. */
  turns(count: number): Promise<number>
  /** Tells it to dispose the agent, close the harness and exit; resolves with the exit code. */
  exit(): Promise<number | null>
}

/**
 * Starts a writer over `options` and waits until its session is open.
 *
 * @param options - the database, the schema, the session, the adapter's `notify`
 * @returns the writer
 */
export async function startTailWriter(options: TailWriterOptions): Promise<TailWriter> {
  made ??= bundle('test/postgres/tail-writer-child.ts', { external: ['pg'] })
  const { file } = await made
  const { NODE_OPTIONS: _loader, ...env } = process.env
  const child = spawn(process.execPath, [file, JSON.stringify(options)], { env, stdio: ['pipe', 'pipe', 'pipe'] })
  const lines: Record<string, unknown>[] = []
  let stderr = ''
  let buffered = ''
  const waiters = new Set<() => void>()
  child.stdout?.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8')
    const parts = buffered.split('\n')
    buffered = parts.pop() ?? ''
    for (const part of parts) if (part !== '') lines.push(JSON.parse(part) as Record<string, unknown>)
    for (const waiter of waiters) waiter()
  })
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')))
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  const waitFor = (condition: () => boolean, what: string): Promise<void> =>
    new Promise((resolve, reject) => {
      const check = (): void => {
        if (!condition()) return
        waiters.delete(check)
        clearTimeout(timer)
        resolve()
      }
      const timer = setTimeout(() => {
        waiters.delete(check)
        reject(new Error(`timed out waiting for the writer: ${what}; stderr: ${stderr}`))
      }, 20_000)
      waiters.add(check)
      void exited.then(() => {
        if (waiters.has(check)) {
          waiters.delete(check)
          clearTimeout(timer)
          reject(new Error(`the writer exited while waiting for ${what}; stderr: ${stderr}`))
        }
      })
      check()
    })
  await waitFor(() => lines.some((line) => 'ready' in line), 'its session to open')
  let turn = 0
  return {
    process: child,
    lines,
    async turns(count) {
      const last = turn + count
      turn = last
      child.stdin?.write(`turns ${count}\n`)
      await waitFor(() => lines.some((line) => line['turn'] === last), `turn ${last}`)
      return lines.find((line) => line['turn'] === last)?.['length'] as number
    },
    async exit() {
      child.stdin?.end('exit\n')
      return exited
    },
  }
}

/** Removes the bundle (call it in `afterAll`). */
export async function removeTailWriter(): Promise<void> {
  const bundled = made
  made = undefined
  await (await bundled?.catch(() => undefined))?.remove()
}
