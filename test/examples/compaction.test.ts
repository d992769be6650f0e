/**
 * Runs `examples/compaction.ts` (imported, so `yoke` resolves to the source) and checks what it
 * prints, so the example in docs/compaction.md never rots.
 */
import { afterEach, expect, test, vi } from 'vitest'

afterEach(() => {
  vi.restoreAllMocks()
})

test('the compaction example runs: a pressure bracket, then a manual one over the checkpoint', async () => {
  const lines: string[] = []
  vi.spyOn(console, 'log').mockImplementation((...parts: unknown[]) => {
    lines.push(parts.map((part) => (typeof part === 'string' ? part : JSON.stringify(part))).join(' '))
  })
  await import('../../examples/compaction.js')
  expect(lines).toEqual([
    'compaction/start c1 pressure',
    'compaction/summary c1 shadows 2 nodes',
    'compaction/end c1',
    'compaction/start c2 manual',
    'compaction/summary c2 shadows 5 nodes',
    'compaction/end c2',
    'model history: ["Earlier conversation, condensed to save …","question 4: lorem ipsum lorem ipsum lore…","answer 4: lorem ipsum lorem ipsum lorem …"]',
    'manual action: c2 replaced 5 nodes (433 → 43 tokens)',
    'request purposes: conversation, conversation, compaction, conversation, conversation, compaction',
  ])
})
