/**
 * What a `yoke` command reads from and writes to its process (results to stdout,
 * diagnostics to stderr). Commands take it as a parameter, so they never touch `process` directly.
 *
 * @module
 */

/** The process surface a command uses. */
export interface CliIo {
  /** Writes result text to stdout, as given (no newline added). */
  readonly stdout: (text: string) => void
  /** Writes diagnostic text to stderr, as given (no newline added). */
  readonly stderr: (text: string) => void
  /** The environment (`DEEPSEEK_API_KEY`, … for `demo`). */
  readonly env: Readonly<Record<string, string | undefined>>
}

/**
 * The {@link CliIo} of the running process.
 *
 * @returns writers over `process.stdout` / `process.stderr`, and `process.env`
 */
export function processIo(): CliIo {
  return {
    stdout: (text) => {
      process.stdout.write(text)
    },
    stderr: (text) => {
      process.stderr.write(text)
    },
    env: process.env,
  }
}
