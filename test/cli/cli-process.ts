/**
 * Runs the real `yoke` CLI as a child process: `src/cli/main.ts` bundled once per test file with
 * esbuild (always the current source, unlike a possibly stale `dist/`), like
 * test/examples/main.test.ts does for the main job.
 */
import { spawn } from 'node:child_process'
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, afterEach, beforeAll, expect } from 'vitest'

const here = dirname(fileURLToPath(import.meta.url))
/** The repository root. */
export const root = join(here, '..', '..')

/** What a child process did. */
export interface Outcome {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** A bundled entry point and how to remove it. */
export interface Bundle {
  readonly file: string
  remove(): Promise<void>
}

/**
 * Bundles a TypeScript entry into an ESM file under `node_modules/.cache`, `yoke` and
 * `yoke/testing` aliased to the source.
 *
 * @param entry - the entry, relative to the repository root
 * @returns the bundle
 */
export async function bundle(entry: string): Promise<Bundle> {
  const { build } = await import('esbuild')
  await mkdir(join(root, 'node_modules', '.cache'), { recursive: true })
  const dir = await mkdtemp(join(root, 'node_modules', '.cache', 'yoke-cli-'))
  const file = join(dir, 'entry.mjs')
  await build({
    entryPoints: [join(root, entry)],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile: file,
    logLevel: 'warning',
    alias: { 'yoke/testing': join(root, 'src', 'testing', 'index.ts'), yoke: join(root, 'src', 'index.ts') },
  })
  return { file, remove: () => rm(dir, { recursive: true, force: true }) }
}

/**
 * Runs a bundle with Node, without `DEEPSEEK_API_KEY` unless `env` sets it.
 *
 * @param file - the bundle
 * @param args - the arguments
 * @param options - the working directory and extra environment
 * @returns the exit code and the output
 */
export function runNode(file: string, args: readonly string[], options: { cwd: string; env?: Readonly<Record<string, string>> }): Promise<Outcome> {
  const environment: NodeJS.ProcessEnv = { ...process.env, ...options.env }
  if (options.env?.['DEEPSEEK_API_KEY'] === undefined) delete environment['DEEPSEEK_API_KEY']
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [file, ...args], { cwd: options.cwd, env: environment, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')))
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

/** The CLI of one test file: a bundle made in `beforeAll`, fresh directories removed after each test. */
export interface CliHarness {
  /** Runs `yoke <args>` in `cwd`. */
  yoke(cwd: string, ...args: string[]): Promise<Outcome>
  /** Runs `yoke <args>` in `cwd` with extra environment. */
  yokeWith(env: Readonly<Record<string, string>>, cwd: string, ...args: string[]): Promise<Outcome>
  /** A fresh temporary directory, removed after the test. */
  freshDir(): Promise<string>
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
