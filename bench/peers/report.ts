/** Prints the peers table and the figures (ratios, targets, PASS or FAIL) from one run's results. */
import type { CyclesResult, FsyncResult, IdleResult, JobResult, LoadResult, StreamResult, TurnsResult } from './job.js'

/** The counts the report names. */
export interface ReportOptions {
  readonly rounds: number
  readonly longTurns: number
  readonly flatTurns: number
  readonly deltas: number
}

const labels: Record<string, string> = {
  pi: 'pi-agent-core 0.73 (no persistence)',
  'ai-sdk': 'AI SDK 6 generateText (caller keeps messages)',
  'openai-agents': 'OpenAI Agents 0.14 run + MemorySession',
  langgraph: 'LangGraph 1.7 StateGraph + MemorySaver',
  'yoke-memory': 'Yoke, memory persistence',
  'yoke-jsonl': 'Yoke, JSONL (default durability)',
  'yoke-jsonl-turn': "Yoke, JSONL, durability 'turn'",
  floor: 'hand-written loop, JSONL + one fdatasync per turn',
}

const us = (value: number): string => (Number.isFinite(value) ? Math.round(value).toLocaleString('en-US') : 'n/a')
const fixed = (value: number, digits = 2): string => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a')

function row(cells: readonly string[], widths: readonly number[]): string {
  return cells
    .map((cell, index) => (index === 0 ? cell.padEnd(widths[0] ?? 0) : cell.padStart(widths[index] ?? 0)))
    .join('  ')
}

interface Figure {
  readonly name: string
  readonly value: string
  readonly target: string
  /** Undefined when it could not be measured (counts as not met). */
  readonly met: boolean | undefined
}

/** Prints the table and the figures. */
export function printReport(options: ReportOptions, results: ReadonlyMap<string, JobResult>): void {
  const turns = (key: string): (TurnsResult & { readonly peakRss: number }) | undefined => {
    const result = results.get(key)
    return result?.kind === 'turns' ? result : undefined
  }
  const widths = [52, 14, 10, 10, 22, 11, 9]
  console.log(`\nper step, median of ${options.rounds} round(s); a step is one model call (two per turn)\n`)
  console.log(row(['runtime', 'mode', 'CPU µs', 'wall µs', 'wall first→last 10%', 'syncs/step', 'RSS MB'], widths))
  const modes: [string, string][] = [
    ['fresh', 'fresh'],
    ['long', `${options.longTurns} turns`],
    ['flat', `${options.flatTurns} turns`],
  ]
  for (const runtime of Object.keys(labels))
    for (const [mode, modeLabel] of modes) {
      const result = turns(`${mode}/${runtime}`)
      if (result === undefined) continue
      if (result.unavailable !== undefined) {
        console.log(row([labels[runtime] as string, modeLabel, `n/a: ${result.unavailable}`], [52, 14, 0]))
        continue
      }
      const growth =
        mode === 'fresh'
          ? '—'
          : `${us(result.firstWall)} → ${us(result.lastWall)} (${fixed(result.lastWall / result.firstWall)}×)`
      console.log(
        row(
          [
            labels[runtime] as string,
            modeLabel,
            us(result.cpuPerStep),
            us(result.wallPerStep),
            growth,
            fixed(mode === 'fresh' ? result.syncsPerStep : result.continuingSyncsPerStep),
            us(result.peakRss / 1_048_576),
          ],
          widths,
        ),
      )
    }

  const fsync = results.get('fsync') as FsyncResult | undefined
  const stream = (name: string): (StreamResult & { readonly peakRss: number }) | undefined =>
    results.get(`stream/${name}`) as (StreamResult & { readonly peakRss: number }) | undefined
  const streams = ['stream-floor', 'stream-ai-sdk', 'stream-yoke'].map(stream)
  if (fsync !== undefined)
    console.log(`\nfdatasync on this disk (300-byte write + fdatasync, median): ${us(fsync.wallPerSync)} µs`)
  if (streams.some((entry) => entry !== undefined)) {
    console.log(
      `\nstreaming, ${options.deltas} text deltas per step from the loopback server (own process), per delta:`,
    )
    const names = [
      'raw floor: fetch + SSE split + JSON.parse + push',
      'AI SDK 6 streamText + openai-compatible 2',
      'Yoke openaiCompatible, fresh agent, memory',
    ]
    streams.forEach((entry, index) => {
      if (entry !== undefined)
        console.log(
          `  ${(names[index] as string).padEnd(50)} ${fixed(entry.cpuPerDelta, 1).padStart(7)} µs CPU  ${fixed(entry.wallPerDelta, 1).padStart(7)} µs wall  RSS ${us(entry.peakRss / 1_048_576)} MB`,
        )
    })
  }
  const load = results.get('load') as LoadResult | undefined
  if (load !== undefined)
    console.log(
      `\nload of a ${load.megabytes.toFixed(1)} MB log: persistence.load ${load.loadMs.toFixed(0)} ms, readFile + split + JSON.parse ${load.floorMs.toFixed(0)} ms (best of 5, interleaved)`,
    )
  const cycles = results.get('cycles') as CyclesResult | undefined
  if (cycles !== undefined) {
    console.log(
      `\n${cycles.cycles.toLocaleString('en-US')} create/run/dispose cycles, persistence ${cycles.persistence}: heap ${(cycles.heapEarly / 1_048_576).toFixed(1)} → ${(cycles.heapEnd / 1_048_576).toFixed(1)} MB, process listeners ${cycles.listenersEarly} → ${cycles.listenersEnd}, active resources ${cycles.resourcesEarly} → ${cycles.resourcesEnd} (at 30% of the cycles → the end, after a gc)`,
    )
  }
  const idle = results.get('idle') as IdleResult | undefined
  if (idle !== undefined)
    console.log(
      `idle agent over ${idle.events} events: holds ${(idle.heldBytes / 1_024).toFixed(0)} KiB of heap; its events are ${(idle.jsonBytes / 1_024).toFixed(0)} KiB of JSON; JSON.parse of its log file's lines alone holds ${(idle.parsedBytes / 1_024).toFixed(0)} KiB (per agent, over 5)`,
    )

  const figures: Figure[] = []
  const ratio = (numerator: number | undefined, denominator: number | undefined): number =>
    numerator === undefined || denominator === undefined ? Number.NaN : numerator / denominator
  const atMost = (name: string, value: number, limit: number, target: string): void => {
    figures.push({ name, value: `${fixed(value)}×`, target, met: Number.isFinite(value) ? value <= limit : undefined })
  }
  for (const mode of ['fresh', 'long']) {
    const yoke = turns(`${mode}/yoke-memory`)?.cpuPerStep
    const fastestPeer = Math.min(
      turns(`${mode}/ai-sdk`)?.cpuPerStep ?? Number.NaN,
      turns(`${mode}/openai-agents`)?.cpuPerStep ?? Number.NaN,
    )
    if (yoke === undefined) continue
    const label = mode === 'fresh' ? 'fresh' : `${options.longTurns} turns`
    atMost(`fig 1 per step, memory, ${label}: Yoke / pi (CPU)`, ratio(yoke, turns(`${mode}/pi`)?.cpuPerStep), 2, '≤ 2×')
    atMost(
      `fig 1 per step, memory, ${label}: Yoke / faster of AI SDK, OpenAI Agents`,
      ratio(yoke, fastestPeer),
      0.5,
      '≤ 0.5×',
    )
  }
  const jsonlLong = turns('long/yoke-jsonl')
  const jsonlFresh = turns('fresh/yoke-jsonl')
  const memoryLong = turns('long/yoke-memory')
  if (jsonlLong !== undefined) {
    const syncs = jsonlLong.continuingSyncsPerStep
    figures.push({
      name: 'fig 2 durable: syncs per step, continuing JSONL session',
      value: fixed(syncs),
      target: '≤ 2',
      met: Number.isFinite(syncs) ? syncs <= 2 : undefined,
    })
    if (jsonlFresh !== undefined) {
      const added = (jsonlFresh.syncsPerStep - syncs) * 2
      figures.push({
        name: "fig 2 durable: a fresh session's creation adds (syncs per turn)",
        value: fixed(added),
        target: '≤ 1',
        met: Number.isFinite(added) ? added <= 1 : undefined,
      })
    }
    if (memoryLong !== undefined && fsync !== undefined) {
      const budget = memoryLong.wallPerStep + 1.2 * syncs * fsync.wallPerSync
      figures.push({
        name: 'fig 2 durable: JSONL wall / (memory wall + 1.2 × syncs × fdatasync)',
        value: `${fixed(jsonlLong.wallPerStep / budget)}×`,
        target: '≤ 1×',
        met: jsonlLong.wallPerStep <= budget,
      })
    }
    const turnMode = turns('long/yoke-jsonl-turn')
    const floor = turns('long/floor')
    if (turnMode !== undefined && floor !== undefined && memoryLong !== undefined) {
      const budget = 1.3 * floor.wallPerStep + memoryLong.wallPerStep
      const value = turnMode.wallPerStep / budget
      figures.push({
        name: "fig 2 durable: 'turn' JSONL wall / (1.3 × floor + Yoke memory)",
        value: turnMode.unavailable === undefined ? `${fixed(value)}×` : 'n/a (no option)',
        target: '≤ 1×',
        met: Number.isFinite(value) ? value <= 1 : undefined,
      })
    }
  }
  const [floorStream, aiStream, yokeStream] = streams
  if (yokeStream !== undefined) {
    atMost(
      'fig 3 streaming: Yoke / raw floor (CPU per delta)',
      ratio(yokeStream.cpuPerDelta, floorStream?.cpuPerDelta),
      2,
      '≤ 2×',
    )
    atMost(
      'fig 3 streaming: Yoke / AI SDK streamText (CPU per delta)',
      ratio(yokeStream.cpuPerDelta, aiStream?.cpuPerDelta),
      0.2,
      '≤ 0.2×',
    )
  }
  for (const store of ['memory', 'jsonl']) {
    const flat = turns(`flat/yoke-${store}`)
    if (flat === undefined) continue
    // Judged on wall (what a user waits for, syncs included); the CPU ratio is shown beside it.
    const wall = ratio(flat.lastWall, flat.firstWall)
    figures.push({
      name: `fig 4 flat, ${store}: last 10% / first 10% of ${options.flatTurns} turns, wall (CPU)`,
      value: `${fixed(wall)}× (${fixed(ratio(flat.lastCpu, flat.firstCpu))}×)`,
      target: '≤ 1.2×',
      met: Number.isFinite(wall) ? wall <= 1.2 : undefined,
    })
  }
  if (load !== undefined)
    atMost('fig 5 load: persistence.load / read + split + parse', load.loadMs / load.floorMs, 2, '≤ 2×')
  if (cycles !== undefined) {
    const heapRatio = cycles.heapEnd / cycles.heapEarly
    figures.push({
      name: `fig 6 memory: heap end / heap at 30% (${cycles.cycles.toLocaleString('en-US')} cycles, persistence ${cycles.persistence})`,
      value: `${fixed(heapRatio)}×`,
      target: '≤ 1.1×, flat',
      met: heapRatio <= 1.1,
    })
    figures.push({
      name: 'fig 6 memory: process listeners and active resources unchanged',
      value: `${cycles.listenersEnd - cycles.listenersEarly}, ${cycles.resourcesEnd - cycles.resourcesEarly}`,
      target: '0, ≤ 0',
      met: cycles.listenersEnd === cycles.listenersEarly && cycles.resourcesEnd <= cycles.resourcesEarly,
    })
  }
  if (idle !== undefined)
    atMost('fig 6 memory: idle agent heap / its events’ JSON bytes', idle.heldBytes / idle.jsonBytes, 2, '≤ 2×')

  if (figures.length === 0) return
  const figureWidths = [84, 16, 14, 5]
  console.log(`\n${row(['figure', 'measured', 'target', ''], figureWidths)}`)
  for (const figure of figures)
    console.log(row([figure.name, figure.value, figure.target, figure.met === true ? 'PASS' : 'FAIL'], figureWidths))
}
