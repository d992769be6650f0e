/**
 * Real child processes for the tests that run an entry point the way a user does (the CLI, the
 * examples, the main job, the packed package): one spawn-and-collect helper, and one esbuild
 * bundler with `yoke` and `yoke/testing` aliased to the source (a bundle starts in ~0.3 s, tsx in
 * ~1 s; it lives under `node_modules/.cache` so its external imports resolve).
 */
import { spawn } from 'node:child_process'
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The repository root. */
export const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')

/** What a finished child process left. */
export interface Outcome {
  /** The exit code (`null` when a signal ended it). */
  readonly code: number | null
  /** Everything it printed on stdout. */
  readonly stdout: string
  /** Everything it printed on stderr. */
  readonly stderr: string
}

/**
 * Runs `command` and collects its output. The child gets this process's environment without
 * `NODE_OPTIONS` (vitest's loader must not leak in) and without `DEEPSEEK_API_KEY` (no live model),
 * then `env` on top.
 *
 * @param command - the executable
 * @param args - its arguments
 * @param options - the working directory and extra environment
 * @returns the exit code and the output, once the process closed
 */
export function runProcess(
  command: string,
  args: readonly string[],
  options: { readonly cwd: string; readonly env?: Readonly<Record<string, string>> },
): Promise<Outcome> {
  const env: NodeJS.ProcessEnv = { ...process.env }
  delete env['NODE_OPTIONS']
  delete env['DEEPSEEK_API_KEY']
  Object.assign(env, options.env)
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')))
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

/** A bundled entry point and how to remove it. */
export interface Bundle {
  /** The bundle's path. */
  readonly file: string
  /** Runs it with Node (see {@link runProcess}). */
  run(
    args: readonly string[],
    options: { readonly cwd: string; readonly env?: Readonly<Record<string, string>> },
  ): Promise<Outcome>
  /** Removes the bundle. */
  remove(): Promise<void>
}

/**
 * Bundles a TypeScript entry into one ESM file under `node_modules/.cache`.
 *
 * @param entry - the entry, relative to the repository root
 * @param options - `external` packages (left to Node to resolve)
 * @returns the bundle
 */
export async function bundle(entry: string, options: { readonly external?: readonly string[] } = {}): Promise<Bundle> {
  const { build } = await import('esbuild')
  await mkdir(join(root, 'node_modules', '.cache'), { recursive: true })
  const dir = await mkdtemp(join(root, 'node_modules', '.cache', 'yoke-bundle-'))
  const file = join(dir, 'entry.mjs')
  await build({
    entryPoints: [join(root, entry)],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile: file,
    logLevel: 'warning',
    external: [...(options.external ?? [])],
    alias: {
      'yoke/testing': join(root, 'src', 'testing', 'index.ts'),
      'yoke/ai-sdk': join(root, 'src', 'ai-sdk', 'index.ts'),
      'yoke/mcp': join(root, 'src', 'mcp', 'index.ts'),
      'yoke/postgres': join(root, 'src', 'postgres', 'index.ts'),
      yoke: join(root, 'src', 'index.ts'),
    },
  })
  return {
    file,
    run: (args, runOptions) => runProcess(process.execPath, [file, ...args], runOptions),
    remove: () => rm(dir, { recursive: true, force: true }),
  }
}
