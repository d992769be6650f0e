/**
 * `npm run bench`: every benchmark in `bench/`, each reported as a ratio to a floor measured in
 * the same run. Not part of `npm test`.
 */
import { runAgentBench } from './agent.bench.js'
import { runKernelBench } from './kernel.bench.js'
import { runModelsBench } from './models.bench.js'
import { runPersistenceBench } from './persistence.bench.js'
import { runSessionBench } from './session.bench.js'
import { runToolsBench } from './tools.bench.js'

console.log(`node ${process.version}, ${new Date().toISOString()}\n`)
console.log('kernel')
const kernel = await runKernelBench()
console.log('\nsession')
const session = await runSessionBench()
console.log('\npersistence')
const persistence = await runPersistenceBench()
console.log('\nmodels')
const models = await runModelsBench()
console.log('\ntools')
const tools = await runToolsBench()
console.log('\nagent')
const agent = await runAgentBench()
console.log(`\nratios: ${JSON.stringify({ kernel, session, persistence, models, tools, agent }, null, 2)}`)
