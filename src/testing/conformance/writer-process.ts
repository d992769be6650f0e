/**
 * The suite's side of the writer protocol: a child process the target's `spawnWriter` started,
 * its replies as they arrive, and the signals the process cases send it.
 *
 * @module
 */
import type { ChildProcess } from 'node:child_process'
import type { ConformanceTarget } from './conformance-target.js'
import type { WriterCommand, WriterReply } from './writer-protocol.js'

/** A running writer child. */
export interface WriterProcess {
  /** Every reply so far, in order. */
  readonly replies: readonly WriterReply[]
  /** Sends the one command. */
  send(command: WriterCommand): void
  /**
   * Waits until a reply satisfies `predicate` (earlier replies count).
   *
   * @returns that reply
   */
  waitFor(
    predicate: (reply: WriterReply, index: number) => boolean,
    what: string,
    timeoutMs?: number,
  ): Promise<WriterReply>
  /** Sends a signal. */
  signal(signal: NodeJS.Signals): void
  /** Settles once the process exited. */
  readonly exited: Promise<void>
  /** Ends the process whatever its state (SIGCONT, then SIGKILL) and waits for it. */
  stop(): Promise<void>
  /** What the process printed that is no reply, and its stderr when piped, for failure messages. */
  noise(): string
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Starts a writer child through the target's `spawnWriter`.
 *
 * @param target - a target with `spawnWriter`
 * @returns the running writer
 */
export async function startWriter(target: ConformanceTarget): Promise<WriterProcess> {
  const child: ChildProcess = await target.spawnWriter!()
  const { stdin, stdout } = child
  if (stdin === null || stdout === null) {
    child.kill('SIGKILL')
    throw new Error('spawnWriter must start the child with stdin and stdout as pipes')
  }
  const replies: WriterReply[] = []
  let noise = ''
  let buffered = ''
  stdout.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8')
    const lines = buffered.split('\n')
    buffered = lines.pop() ?? ''
    for (const line of lines) {
      if (line === '') continue
      try {
        replies.push(JSON.parse(line) as WriterReply)
      } catch {
        noise += `${line}\n`
      }
    }
  })
  child.stderr?.on('data', (chunk: Buffer) => void (noise += chunk.toString('utf8')))
  // A child killed before it read its command closes the pipe under our write.
  stdin.on('error', () => undefined)
  let done = child.exitCode !== null || child.signalCode !== null
  const exited = done
    ? Promise.resolve()
    : new Promise<void>((resolve) =>
        child.once('exit', () => {
          done = true
          resolve()
        }),
      )
  const writer: WriterProcess = {
    replies,
    send: (command) => void stdin.write(`${JSON.stringify(command)}\n`),
    async waitFor(predicate, what, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs
      for (;;) {
        const index = replies.findIndex(predicate)
        if (index !== -1) return replies[index]!
        if (done || Date.now() > deadline) {
          // Let the last output arrive before giving up.
          await sleep(20)
          const late = replies.findIndex(predicate)
          if (late !== -1) return replies[late]!
          throw new Error(
            `the writer child ${done ? 'exited' : 'timed out'} before ${what}; replies: ${JSON.stringify(replies.slice(-5))}; output: ${writer.noise()}`,
          )
        }
        await sleep(5)
      }
    },
    signal: (signal) => {
      if (!done) child.kill(signal)
    },
    exited,
    async stop() {
      if (!done) {
        child.kill('SIGCONT')
        child.kill('SIGKILL')
      }
      await exited
    },
    noise: () => noise.slice(-2_000),
  }
  return writer
}
