/**
 * Runs an example as a real process, the way `npm run example -- <name>` does: bundled once with
 * esbuild (`yoke` and `yoke/testing` aliased to the source, so no build is needed), then started
 * with `node`.
 */
import { bundle, type Outcome, root } from '../helpers/child-process.js'

/** What a finished example process left. */
export type ExampleOutcome = Outcome

/** A bundled example. */
export interface ExampleBundle {
  /** Runs the bundle with `args` in `cwd` (default: the repository root) and resolves once the process exited. */
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
  const bundled = await bundle(`examples/${name}.ts`)
  return {
    run: (args = [], cwd = root) => bundled.run(args, { cwd }),
    remove: () => bundled.remove(),
  }
}
