/**
 * The packed package for the tests that install it the way a user gets it: `npm pack` of the
 * built `dist/` (built first when it is missing, e.g. a run of one test file on a fresh clone),
 * and a project with the tarball unpacked into `node_modules/yoke`, whose only other packages are
 * linked from this repository: Yoke's runtime dependencies, its required peer (zod) and whatever
 * else the caller names (`@types/node` for a compiler). No optional peer and no dev dependency can
 * be resolved from there.
 */
import { existsSync } from 'node:fs'
import { chmod, mkdir, readFile, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { type Outcome, root, runProcess } from '../helpers/child-process.js'

/** The parts of this repository's package.json the package tests read. */
export interface Manifest {
  /** The version. */
  readonly version: string
  /** The runtime dependencies. */
  readonly dependencies: Readonly<Record<string, string>>
  /** The peer dependencies a user installs next to Yoke. */
  readonly peerDependencies: Readonly<Record<string, string>>
  /** Which peers are optional (the database drivers, needed only by their adapters). */
  readonly peerDependenciesMeta?: Readonly<Record<string, { readonly optional?: boolean }>>
  /** The dev dependencies (pinned). */
  readonly devDependencies: Readonly<Record<string, string>>
  /** The `bin` entries. */
  readonly bin: Readonly<Record<string, string>>
}

/** This repository's package.json. */
export const manifest = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as Manifest

/** The peers every user installs (zod); the optional ones are left out so they cannot be resolved. */
export const requiredPeers = Object.keys(manifest.peerDependencies).filter(
  (name) => manifest.peerDependenciesMeta?.[name]?.optional !== true,
)

/**
 * Runs `command` in `cwd` and returns its stdout; a non-zero exit throws with all its output.
 *
 * @param command - the executable
 * @param args - its arguments
 * @param cwd - the working directory
 * @returns what it printed on stdout
 */
export async function succeed(command: string, args: readonly string[], cwd: string): Promise<string> {
  const outcome: Outcome = await runProcess(command, args, { cwd })
  if (outcome.code !== 0)
    throw new Error(`${command} ${args.join(' ')} exited ${outcome.code}:\n${outcome.stdout}\n${outcome.stderr}`)
  return outcome.stdout
}

/** A packed tarball. */
export interface Packed {
  /** The tarball's path. */
  readonly tarball: string
  /** The paths it holds, relative to the package root. */
  readonly files: readonly string[]
}

/**
 * Packs the built package into `dir` (building first when `dist/` is incomplete).
 *
 * @param dir - where the tarball goes
 * @returns the tarball and its file list
 */
export async function packYoke(dir: string): Promise<Packed> {
  const built = [
    'index.js',
    'index.cjs',
    'index.d.ts',
    'testing.js',
    'testing.cjs',
    'sqlite.js',
    'sqlite.cjs',
    'cli.js',
  ].every((file) => existsSync(join(root, 'dist', file)))
  if (!built)
    await succeed(process.execPath, [join(root, 'node_modules', 'tsup', 'dist', 'cli-default.js'), '--silent'], root)
  const listing = JSON.parse(
    await succeed('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], root),
  ) as { readonly filename: string; readonly files: readonly { readonly path: string }[] }[]
  const tarball = listing[0]
  if (tarball === undefined) throw new Error('npm pack listed no tarball')
  return { tarball: join(dir, tarball.filename), files: tarball.files.map((file) => file.path) }
}

/**
 * Makes `project` a package that has Yoke installed from `tarball`, without a registry: the
 * tarball unpacked into `node_modules/yoke`, the `bin` links npm would make, and links to this
 * repository's copies of the runtime dependencies, the required peers and `extra`.
 *
 * @param project - the project directory (created)
 * @param tarball - from {@link packYoke}
 * @param packageJson - the project's package.json
 * @param extra - further packages to link from this repository's node_modules
 */
export async function installUnpacked(
  project: string,
  tarball: string,
  packageJson: Readonly<Record<string, unknown>>,
  extra: readonly string[] = [],
): Promise<void> {
  const installed = join(project, 'node_modules', 'yoke')
  await mkdir(installed, { recursive: true })
  await succeed('tar', ['-xzf', tarball, '-C', installed, '--strip-components=1'], project)
  const linked = [...Object.keys(manifest.dependencies), ...requiredPeers, ...extra]
  for (const dependency of linked) {
    const target = join(project, 'node_modules', dependency)
    await mkdir(join(target, '..'), { recursive: true })
    await symlink(join(root, 'node_modules', dependency), target, 'dir')
  }
  // What npm does for a `bin` entry on install: a link in node_modules/.bin and the execute bit.
  await mkdir(join(project, 'node_modules', '.bin'))
  for (const [name, target] of Object.entries(manifest.bin)) {
    await chmod(join(installed, target), 0o755)
    await symlink(join('..', 'yoke', target), join(project, 'node_modules', '.bin', name))
  }
  await writeFile(join(project, 'package.json'), `${JSON.stringify(packageJson, null, 2)}\n`)
}
