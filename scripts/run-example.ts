/**
 * `npm run example -- <name> [args…]`: runs `examples/<name>.ts` with the rest of the arguments;
 * without a name, lists the examples. Like `npm start`, it runs against the source (tsx maps
 * `yoke` to `src/` through tsconfig.test.json's paths), so no build comes first.
 */
import { spawnSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const examplesDir = fileURLToPath(new URL('../examples/', import.meta.url))
const tsconfig = fileURLToPath(new URL('../tsconfig.test.json', import.meta.url))
const available = readdirSync(examplesDir)
  .filter((file) => file.endsWith('.ts') && !file.endsWith('.test.ts'))
  .map((file) => file.slice(0, -3))
const name = process.argv[2]
if (name === undefined || !available.includes(name)) {
  if (name !== undefined) console.error(`unknown example "${name}"`)
  console.error(`usage: npm run example -- <name>\nexamples: ${available.join(', ')}`)
  process.exit(name === undefined ? 0 : 1)
}
const result = spawnSync(process.execPath, ['--import', 'tsx', `${examplesDir}${name}.ts`, ...process.argv.slice(3)], {
  stdio: 'inherit',
  env: { ...process.env, TSX_TSCONFIG_PATH: tsconfig },
})
process.exit(result.status ?? 1)
