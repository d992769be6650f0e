/**
 * Drives a fake clock until a condition holds: each round lets real I/O (a JSONL flush, a
 * scheduled callback) progress, then fires every due fake timer. Bounded by wall time rather than
 * by a number of rounds, because a loaded machine needs more rounds for the same file writes.
 */
export async function driveFakeClock(
  clock: { runAll(): unknown },
  done: () => boolean,
  timeoutMs = 15_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!done() && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 1))
    clock.runAll()
  }
}
