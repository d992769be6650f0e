/**
 * Runs `examples/custom-tool.ts` (imported, so `yoke` resolves to the source) and checks what it
 * prints, so the example in docs/tools.md never rots.
 */
import { afterEach, expect, test, vi } from 'vitest'

afterEach(() => {
  vi.restoreAllMocks()
})

test('the custom-tool example runs: parallel weather calls, then the exclusive note, committed in model order', async () => {
  const lines: string[] = []
  vi.spyOn(console, 'log').mockImplementation((...parts: unknown[]) => {
    lines.push(parts.map((part) => (typeof part === 'string' ? part : JSON.stringify(part))).join(' '))
  })
  await import('../../examples/custom-tool.js')
  expect(lines[0]).toBe('schemas: get_weather, save_note')
  expect(lines).toContain('step outcome: owed')
  expect(lines).toContain('live tools/result order: c2, c1, c3')
  const logged = lines.filter((line) => line.startsWith('{"seq"')).map((line) => JSON.parse(line) as { type: string; data: { callId?: string } })
  expect(logged.map((event) => event.type)).toEqual([
    'assistant/message',
    'tool/call',
    'tool/call',
    'tool/result',
    'tool/result',
    'tool/call',
    'tool/result',
    'step/end',
    'turn/end',
  ])
  expect(logged.filter((event) => event.type === 'tool/call').map((event) => event.data.callId)).toEqual(['c1', 'c2', 'c3'])
})
