/**
 * Runs the real `yoke` CLI as a child process: `src/cli/main.ts` bundled once per test file with
 * esbuild (always the current source, unlike a possibly stale `dist/`).
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, expect } from 'vitest'
import { type Bundle, bundle, type Outcome, runProcess } from '../helpers/child-process.js'

export { type Bundle, bundle, type Outcome } from '../helpers/child-process.js'

/**
 * Runs a bundle with Node, without `DEEPSEEK_API_KEY` unless `env` sets it.
 *
 * @param file - the bundle
 * @param args - the arguments
 * @param options - the working directory and extra environment
 * @returns the exit code and the output
 */
export function runNode(
  file: string,
  args: readonly string[],
  options: { cwd: string; env?: Readonly<Record<string, string>> },
): Promise<Outcome> {
  return runProcess(process.execPath, [file, ...args], options)
}

/** The CLI of one test file: a bundle made in `beforeAll`, fresh directories removed after each test. */
export interface CliHarness {
  /** Runs `yoke <args>` in `cwd`. */
  yoke(cwd: string, ...args: string[]): Promise<Outcome>
  /** Runs `yoke <args>` in `cwd` with extra environment. */
  yokeWith(env: Readonly<Record<string, string>>, cwd: string, ...args: string[]): Promise<Outcome>
  /** A fresh temporary directory, removed after the test. */
  freshDir(): Promise<string>
  /** The bundled CLI's path (for a shell pipeline). */
  file(): string
}

/**
 * Registers the hooks of a CLI test file and returns its helpers.
 *
 * @returns the helpers
 */
export function useCli(): CliHarness {
  let cli: Bundle | undefined
  const dirs: string[] = []
  beforeAll(async () => {
    cli = await bundle('src/cli/main.ts')
  }, 30_000)
  afterAll(async () => {
    await cli?.remove()
  })
  afterEach(async () => {
    for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true })
  })
  const file = (): string => {
    if (cli === undefined) throw new Error('the CLI is not bundled yet')
    return cli.file
  }
  return {
    yoke: (cwd, ...args) => runNode(file(), args, { cwd }),
    yokeWith: (env, cwd, ...args) => runNode(file(), args, { cwd, env }),
    file,
    freshDir: async () => {
      const dir = await mkdtemp(join(tmpdir(), 'yoke-cli-'))
      dirs.push(dir)
      return dir
    },
  }
}

/**
 * The parsed JSON stdout of a successful command (asserting stderr is empty).
 *
 * @param outcome - the command's outcome
 * @returns the document
 */
export function jsonOf(outcome: Outcome): Record<string, unknown> {
  expect(outcome.stderr).toBe('')
  return JSON.parse(outcome.stdout) as Record<string, unknown>
}

/**
 * Asserts a failed command: nothing on stdout, one line `yoke: <CODE>: …` on
 * stderr, and exit `code`.
 *
 * @param outcome - the command's outcome
 * @param code - the expected exit code
 * @param errorCode - the expected error code
 */
export function failed(outcome: Outcome, code: number, errorCode: string): void {
  expect(outcome.stdout).toBe('')
  expect(outcome.stderr.startsWith(`yoke: ${errorCode}: `)).toBe(true)
  expect(outcome.stderr.endsWith('\n')).toBe(true)
  expect(outcome.stderr.trimEnd().split('\n')).toHaveLength(1)
  expect(outcome.code).toBe(code)
}
