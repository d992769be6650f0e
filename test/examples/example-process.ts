/**
 * Runs an example as a real process, the way `npm run example -- <name>` does: bundled once with
 * esbuild (`yoke` and `yoke/testing` aliased to the source, so no build is needed), then started
 * with `node`. The bundle lives under `node_modules/.cache` so its external imports resolve.
 */
import { spawn } from 'node:child_process'
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')

/** What a finished example process left. */
export interface ExampleOutcome {
  /** The exit code (`null` when a signal ended it). */
  readonly code: number | null
  /** Everything it printed on stdout. */
  readonly stdout: string
  /** Everything it printed on stderr. */
  readonly stderr: string
}

/** A bundled example. */
export interface ExampleBundle {
  /** Runs the bundle with `args` in `cwd` and resolves once the process exited. */
  run(args?: readonly string[], cwd?: string): Promise<ExampleOutcome>
  /** Removes the bundle. */
  remove(): Promise<void>
}

/**
 * Bundles `examples/<name>.ts`.
 *
 * @param name - the example's name
 * @returns the bundle
 */
export async function bundleExample(name: string): Promise<ExampleBundle> {
  const { build } = await import('esbuild')
  await mkdir(join(root, 'node_modules', '.cache'), { recursive: true })
  const dir = await mkdtemp(join(root, 'node_modules', '.cache', `yoke-example-${name}-`))
  const outfile = join(dir, `${name}.mjs`)
  await build({
    entryPoints: [join(root, 'examples', `${name}.ts`)],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile,
    logLevel: 'warning',
    alias: { 'yoke/testing': join(root, 'src', 'testing', 'index.ts'), yoke: join(root, 'src', 'index.ts') },
  })
  return {
    run: (args = [], cwd = root) =>
      new Promise((resolve, reject) => {
        const env = { ...process.env }
        delete env['NODE_OPTIONS']
        delete env['DEEPSEEK_API_KEY']
        const child = spawn(process.execPath, [outfile, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] })
        let stdout = ''
        let stderr = ''
        child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')))
        child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')))
        child.on('error', reject)
        child.on('close', (code) => resolve({ code, stdout, stderr }))
      }),
    remove: () => rm(dir, { recursive: true, force: true }),
  }
}
