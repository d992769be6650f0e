/**
 * `npm run bench`: every benchmark in `bench/`, each reported as a ratio to a floor measured in
 * the same run. Not part of `npm test`. `npm run bench -- agent session` runs only the named ones.
 */
import { runAgentBench } from './agent.bench.js'
import { runChecksumBench } from './checksum.bench.js'
import { runDurabilityBench } from './durability.bench.js'
import { runKernelBench } from './kernel.bench.js'
import { runModelsBench } from './models.bench.js'
import { runPersistenceBench } from './persistence.bench.js'
import { runPostgresBench } from './postgres.bench.js'
import { runScaleOutBench } from './scale-out.bench.js'
import { runSessionBench } from './session.bench.js'
import { runSqliteBench } from './sqlite.bench.js'
import { runStreamDeltaBench } from './stream-delta.bench.js'
import { runToolsBench } from './tools.bench.js'

const benches = {
  kernel: runKernelBench,
  session: runSessionBench,
  persistence: runPersistenceBench,
  sqlite: runSqliteBench,
  postgres: runPostgresBench,
  checksum: runChecksumBench,
  models: runModelsBench,
  tools: runToolsBench,
  agent: runAgentBench,
  durability: runDurabilityBench,
  stream: runStreamDeltaBench,
  'scale-out': runScaleOutBench,
} as const
type BenchName = keyof typeof benches

const isBenchName = (name: string): name is BenchName => Object.hasOwn(benches, name)
const asked = process.argv.slice(2)
const unknown = asked.filter((name) => !isBenchName(name))
if (unknown.length > 0) {
  console.error(`unknown bench ${unknown.join(', ')}; the benches are ${Object.keys(benches).join(', ')}`)
  process.exit(2)
}
const selected = asked.length > 0 ? asked.filter(isBenchName) : (Object.keys(benches) as BenchName[])

console.log(`node ${process.version}, ${new Date().toISOString()}`)
const ratios: Partial<Record<BenchName, unknown>> = {}
for (const name of selected) {
  console.log(`\n${name}`)
  ratios[name] = await benches[name]()
}
console.log(`\nratios: ${JSON.stringify(ratios, null, 2)}`)
