#!/usr/bin/env node
/**
 * The `yoke` bin (`dist/cli.js`).
 *
 * @module
 */
import { processIo } from './cli-io.js'
import { runCli } from './run-cli.js'

// A reader that closed the pipe (`yoke export … | head`) ends the output: exit quietly with the
// code so far, as Unix tools do, instead of an unhandled EPIPE.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error
    process.exit(typeof process.exitCode === 'number' ? process.exitCode : 0)
  })
}

void runCli(process.argv.slice(2), processIo()).then((code) => {
  process.exitCode = code
})
