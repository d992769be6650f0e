import { createMemoryStore, memoryPersistence } from '../../src/persistence/memory-persistence.js'
import { runPersistenceConformance } from '../../src/testing/run-persistence-conformance.js'
import { damageLine, vitestRunnerWithoutProcesses } from './conformance-helpers.js'

const latin = new TextDecoder()
const utf8 = new TextEncoder()

runPersistenceConformance(
  'memoryPersistence conformance',
  () => {
    const store = createMemoryStore()
    return {
      adapter: memoryPersistence({ store }),
      reopen: () => memoryPersistence({ store }),
      bytes: {
        read: (id) => store.read(id) ?? new Uint8Array(),
        write: (id, bytes) => store.write(id, bytes),
      },
      damageRecord: (id, seq) => {
        const bytes = store.read(id)
        const damaged = bytes === undefined ? undefined : damageLine(latin.decode(bytes), seq, 1)
        if (damaged === undefined) throw new Error(`no stored line of ${id} holds seq ${seq}`)
        store.write(id, utf8.encode(damaged))
      },
      expireLease: (id) => {
        if (!store.expireLease(id)) throw new Error(`no lease of ${id} to expire`)
      },
      plantLease: (id, holder) => store.plantLease(id, holder),
      ageLease: (id) => {
        if (!store.ageLease(id)) throw new Error(`no lease of ${id} to age`)
      },
    }
  },
  // No spawnWriter: a memory store dies with its process, so no child process can share it.
  { runner: vitestRunnerWithoutProcesses },
)
