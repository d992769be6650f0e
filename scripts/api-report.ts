/**
 * The API report: API Extractor reads the bundled declarations a user gets (`dist/index.d.ts`,
 * `dist/testing.d.ts`) and writes every exported name and signature to `api/<entry>.api.md`,
 * committed, so any change to the public surface shows up as a diff in review.
 *
 * `npm run check:api` (part of `npm test`, after the build) fails when a report differs from what
 * the build exports; `npm run api:update` rewrites the reports.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Extractor, ExtractorConfig, ExtractorLogLevel, type IConfigFile } from '@microsoft/api-extractor'

const root = fileURLToPath(new URL('..', import.meta.url))
const update = process.argv.includes('--update')

/** Where the declarations API Extractor reads are staged (see {@link stageDeclarations}). */
const staged = join(root, '.build', 'api', 'dist')

/**
 * Copies the bundled declarations to {@link staged}, with each feature's
 * `declare module 'yoke' { … }` block unwrapped into plain top-level declarations. Inside the
 * package's own entry file that is the same declaration merging (the block augments the file it
 * sits in), but API Extractor cannot analyze a module that augments itself, so it reads the
 * unwrapped copy; the merged members (`ctx.tools`, the features' events) then show in the report.
 */
function stageDeclarations(): void {
  mkdirSync(staged, { recursive: true })
  for (const name of readdirSync(join(root, 'dist'))) {
    if (!name.endsWith('.d.ts')) continue
    const lines = readFileSync(join(root, 'dist', name), 'utf8').split('\n')
    const out: string[] = []
    let inside = false
    for (const line of lines) {
      if (!inside && line === "declare module 'yoke' {") inside = true
      else if (inside && line === '}') inside = false
      else out.push(inside ? line.replace(/^ {4}/, '') : line)
    }
    writeFileSync(join(staged, name), out.join('\n'))
  }
}

/** One report per entry point of the package's `exports`. */
const entries = [
  { declarations: 'index.d.ts', report: 'yoke' },
  { declarations: 'testing.d.ts', report: 'yoke-testing' },
  { declarations: 'sqlite.d.ts', report: 'yoke-sqlite' },
  { declarations: 'postgres.d.ts', report: 'yoke-postgres' },
  { declarations: 'ai-sdk.d.ts', report: 'yoke-ai-sdk' },
  { declarations: 'mcp.d.ts', report: 'yoke-mcp' },
] as const

/**
 * The configuration for one entry. The declarations are checked the way a strict consumer reads
 * them (`skipLibCheck` stays off). Findings about the API itself (a type a signature needs but the
 * entry does not export) go into the report, where review sees them. Comments are not this check's
 * business: TypeDoc validates them (missing docs, links), and Yoke has no release tags.
 */
function configFor(entry: (typeof entries)[number]): IConfigFile {
  return {
    projectFolder: root,
    mainEntryPointFilePath: join(staged, entry.declarations),
    compiler: {
      overrideTsconfig: {
        compilerOptions: {
          target: 'ES2022',
          lib: ['ES2022', 'ESNext.Disposable'],
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          types: ['node'],
          strict: true,
          skipLibCheck: false,
        },
        files: [join(staged, entry.declarations)],
      },
    },
    apiReport: {
      enabled: true,
      reportFileName: entry.report,
      reportFolder: join(root, 'api'),
      reportTempFolder: join(root, '.build', 'api'),
    },
    docModel: { enabled: false },
    dtsRollup: { enabled: false },
    tsdocMetadata: { enabled: false },
    newlineKind: 'lf',
    messages: {
      compilerMessageReporting: { default: { logLevel: ExtractorLogLevel.Error } },
      extractorMessageReporting: {
        default: { logLevel: ExtractorLogLevel.Warning, addToApiReportFile: true },
        'ae-missing-release-tag': { logLevel: ExtractorLogLevel.None },
        'ae-undocumented': { logLevel: ExtractorLogLevel.None },
        'ae-unresolved-link': { logLevel: ExtractorLogLevel.None },
      },
      tsdocMessageReporting: { default: { logLevel: ExtractorLogLevel.None } },
    },
  }
}

/** API Extractor's console notices this script replaces with its own lines. */
const quiet = new Set<string>([
  'console-preamble',
  'console-api-report-not-copied',
  'console-api-report-copied',
  'console-api-report-created',
])

mkdirSync(join(root, 'api'), { recursive: true })
stageDeclarations()
const changed: string[] = []
let failed = false
for (const entry of entries) {
  const config = ExtractorConfig.prepare({
    configObject: configFor(entry),
    configObjectFullPath: join(root, 'api', `${entry.report}.api-extractor.json`),
    packageJsonFullPath: join(root, 'package.json'),
  })
  const result = Extractor.invoke(config, {
    // A local build rewrites the committed report; otherwise a difference is a failure.
    localBuild: update,
    showVerboseMessages: false,
    // A failed check shows what changed.
    printApiReportDiff: !update,
    messageCallback: (message) => {
      // The compiler notice is noise here (it reads declarations only), and the notices about a
      // changed report are summed up below with the command that updates it.
      if (quiet.has(message.messageId)) message.handled = true
    },
  })
  if (result.errorCount > 0) failed = true
  if (result.apiReportChanged) changed.push(`api/${entry.report}.api.md`)
}

if (failed) {
  console.error('api-report: API Extractor reported errors (above)')
  process.exit(1)
}
if (changed.length > 0 && !update) {
  console.error(
    `api-report: the public API differs from ${changed.join(' and ')}.\n` +
      'If the change is intended, run `npm run api:update` and commit the reports.',
  )
  process.exit(1)
}
console.log(
  update && changed.length > 0
    ? `api-report: updated ${changed.join(' and ')}`
    : 'api-report: the API reports are current',
)
