/**
 * A session parked on a manual tool approval is not runnable work: while the approval waits, the
 * sweeper makes no new job for it, no other worker claims it and nothing is handed to its agent
 * again; once it is approved, the turn ends and the session's job is done.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { z } from 'zod'
import { defineTool } from '../../src/index.js'
import { createPostgresClient, createWorker, type PostgresClient } from '../../src/postgres/index.js'
import { scriptedModel, text, tool } from '../../src/testing/index.js'
import { skipPostgres } from '../helpers/postgres.js'
import { eventually, type WorkerSchema, workerSchema } from './worker-fixtures.js'

describe.skipIf(skipPostgres)('a session waiting for a manual approval', () => {
  let db: WorkerSchema
  let client: PostgresClient

  beforeAll(async () => {
    db = await workerSchema('approval')
    client = createPostgresClient({ connectionString: db.schema.connectionString, schema: db.schema.schema })
  })
  afterAll(async () => {
    await client?.close()
    await db?.close()
  })

  test('stays with its worker, makes no new job and runs nothing twice until it is decided', async () => {
    let transfers = 0
    const transfer = defineTool({
      name: 'transfer',
      description: 'Moves money',
      input: z.object({ amount: z.number() }),
      needsApproval: () => true,
      execute: ({ amount }) => {
        transfers++
        return `moved ${amount}`
      },
    })
    const start = (script: Parameters<typeof scriptedModel>[0]) =>
      createWorker({
        model: scriptedModel(script),
        tools: [transfer],
        persistence: db.adapter(),
        agent: { options: { approvalMode: 'manual' } },
        pollMs: 100,
        sweepMs: 100,
      })
    const holder = await start([tool('transfer', { amount: 5 }), text('moved it')])
    let idle: Awaited<ReturnType<typeof start>> | undefined
    try {
      const { messageId } = await client.submit('approve-1', 'Move 5', { create: true })
      const agent = await eventually(async () => {
        if (!holder.driving.includes('approve-1')) return undefined
        const live = await holder.harness.openAgent('approve-1')
        return live.pendingApprovals.length === 1 ? live : undefined
      }, 'the approval to be asked')

      // A second worker that would take any runnable session, and whose model must never be asked.
      idle = await start([])
      // Parked: several sweeps and polls later, still one job, driven by the same worker only.
      await new Promise((resolve) => setTimeout(resolve, 800))
      expect(await db.runnableCount()).toBe(1)
      expect(holder.driving).toEqual(['approve-1'])
      expect(idle.driving).toEqual([])
      expect(holder.delivered).toBe(1)
      expect(idle.delivered).toBe(0)
      expect(transfers).toBe(0)
      const [row] = await db.inbox('approve-1')
      expect(row).toMatchObject({ id: messageId })
      expect(row?.consumed_seq).not.toBeNull()

      agent.approve(agent.pendingApprovals[0]!.approvalId, { kind: 'allow' })
      await eventually(async () => (await db.runnableCount()) === 0, 'the session to be done')
      expect(transfers).toBe(1)
      const types = await db.eventTypes('approve-1')
      expect(types.filter((type) => type === 'approval/decided')).toHaveLength(1)
      expect(types.at(-1)).toBe('turn/end')
      expect(idle.delivered).toBe(0)
    } finally {
      await holder.close()
      await idle?.close()
    }
  }, 40_000)
})
