#!/usr/bin/env node
/**
 * The `yoke` bin (`dist/cli.js`, 09-api.md §7).
 *
 * @module
 */
import { processIo } from './cli-io.js'
import { runCli } from './run-cli.js'

void runCli(process.argv.slice(2), processIo()).then((code) => {
  process.exitCode = code
})
