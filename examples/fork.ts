/**
 * Forking a conversation: an agent answers two turns, then the session is
 * forked right after turn 1 and both branches go on. The fork copies events 0…`at` into a new
 * session whose header names its parent; the parent's log does not change.
 *
 * Sessions are JSONL files in `--dir <directory>` (default: a fresh temporary directory, removed
 * at the end). The model is scripted, one script per branch, so the output never changes.
 *
 * Run: `npm run example -- fork`
 */
import { readFile, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createHarness, type TurnResult } from 'yoke'
import { scriptedModel, text } from 'yoke/testing'

const dirFlag = process.argv.indexOf('--dir')
const dir = dirFlag === -1 ? await mkdtemp(join(tmpdir(), 'yoke-fork-')) : process.argv[dirFlag + 1]!
const logFile = (id: string): string => join(dir, `${id}.jsonl`)

function report(branch: string, result: TurnResult): void {
  console.log(`${branch} turn ${result.turn} ${result.reason.kind}: ${result.text}`)
}

const harness = await createHarness({ persistence: { dir } })

// The parent branch: two turns. Each agent may bring its own model; here each branch has a script.
const parent = await harness.createAgent({
  sessionId: 'trip',
  model: scriptedModel([
    text('Day 1: the Louvre. Day 2: Montmartre.'),
    text('Cheaper: picnic lunches and the free first-Sunday museums.'),
    text('Packing: an umbrella and good shoes.'),
  ]),
})
report('trip', await parent.run('Plan two days in Paris.'))
report('trip', await parent.run('Make it cheaper.'))

// Fork after turn 1: `at` is the last seq copied (inclusive), here turn 1's `turn/end`.
const turnOneEnd = parent.session.events.find((event) => event.type === 'turn/end')!
const before = await readFile(logFile('trip'))
const child = await harness.fork('trip', { at: turnOneEnd.seq, id: 'trip-rainy' })
const after = await readFile(logFile('trip'))
console.log(
  `forked trip at seq ${turnOneEnd.seq} into ${child.id}: ${child.length} events, parent ${child.header.parentSession}`,
)
console.log(`parent log unchanged by the fork: ${before.equals(after)}`)

// The fork is a read-only snapshot; `resumeAgent` drives it. Its next turn is turn 2: it knows
// turn 1 ("two days in Paris") and nothing of the parent's "make it cheaper".
const branch = await harness.resumeAgent(child.id, {
  model: scriptedModel([text('Rainy version: the Musée d’Orsay, then the covered passages.')]),
})
report('trip-rainy', await branch.run('What if it rains?'))

// The parent goes on too, from its own turn 2.
report('trip', await parent.run('What should I pack?'))

await harness.close()
if (dirFlag === -1) await rm(dir, { recursive: true, force: true })
