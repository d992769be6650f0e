/** One measured case: operations per second, best of several rounds. */
export interface Measurement {
  readonly name: string
  readonly opsPerSecond: number
}

/**
 * Runs `operation` in rounds of `batch` calls until `roundMs` passes, `rounds` times, and keeps
 * the best round (the least disturbed by GC and the scheduler).
 */
export async function measure(
  name: string,
  operation: () => unknown,
  options: { batch?: number; rounds?: number; roundMs?: number } = {},
): Promise<Measurement> {
  const batch = options.batch ?? 1_000
  const rounds = options.rounds ?? 5
  const roundMs = options.roundMs ?? 200
  for (let index = 0; index < batch; index++) await operation()
  let best = 0
  for (let round = 0; round < rounds; round++) {
    let operations = 0
    const started = performance.now()
    let elapsed = 0
    while (elapsed < roundMs) {
      for (let index = 0; index < batch; index++) {
        const result = operation()
        if (result instanceof Promise) await result
      }
      operations += batch
      elapsed = performance.now() - started
    }
    best = Math.max(best, (operations / elapsed) * 1_000)
  }
  return { name, opsPerSecond: best }
}

/** Prints a case next to its floor: the ratio is how many times slower than the plain loop. */
export function report(subject: Measurement, floor: Measurement): { readonly ratio: number } {
  const ratio = floor.opsPerSecond / subject.opsPerSecond
  const format = (value: number): string => Math.round(value).toLocaleString('en-US').padStart(14)
  console.log(`${subject.name.padEnd(44)} ${format(subject.opsPerSecond)} ops/s`)
  console.log(`${`  floor: ${floor.name}`.padEnd(44)} ${format(floor.opsPerSecond)} ops/s   ratio ${ratio.toFixed(2)}×`)
  return { ratio }
}
