/**
 * Runs `examples/custom-tool.ts` (imported, so `yoke` resolves to the source) and checks what it
 * prints: the parallel weather calls finish out of order, the log
 * commits them in model order, the exclusive note runs last, and every result reaches the
 * model's second request. docs/tools.md quotes this output, so it never rots.
 */
import { afterEach, expect, test, vi } from 'vitest'

afterEach(() => {
  vi.restoreAllMocks()
})

test('the custom-tool example: parallel weather calls, the exclusive note, and the results in the second request', async () => {
  const lines: string[] = []
  vi.spyOn(console, 'log').mockImplementation((...parts: unknown[]) => {
    lines.push(parts.map((part) => (typeof part === 'string' ? part : JSON.stringify(part))).join(' '))
  })
  await import('../../examples/custom-tool.js')
  expect(process.exitCode ?? 0).toBe(0)
  expect(lines[0]).toBe('schemas: get_weather, save_note')
  expect(lines).toContain('progress c1: {"city":"Paris","status":"fetching"}')
  expect(lines).toContain('live tools/result order: c2, c1, c3')
  const logged = lines
    .filter((line) => line.startsWith('{"seq"'))
    .map(
      (line) =>
        JSON.parse(line) as {
          type: string
          data: { callId?: string; message?: { content: { toolCallId: string }[] } }
        },
    )
  expect(logged.map((event) => [event.type, event.data.callId ?? event.data.message?.content[0]?.toolCallId])).toEqual([
    ['tool/call', 'c1'],
    ['tool/call', 'c2'],
    ['tool/result', 'c1'],
    ['tool/result', 'c2'],
    ['tool/call', 'c3'],
    ['tool/result', 'c3'],
  ])
  expect(lines).toContain('the second request carried: c1: Paris: 18°C, light rain | c2: Oslo: 39°F, clear | c3: saved')
  expect(lines).toContain(
    'and the context save_note added: [{"type":"text","text":"The user now has a note: pack an umbrella"}]',
  )
  expect(lines).toContain('answer: Noted. c1: Paris: 18°C, light rain; c2: Oslo: 39°F, clear.')
  expect(lines.at(-1)).toBe('turn 1 completed, 2 requests')
})
