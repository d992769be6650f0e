/**
 * The project speaks in its own words. Comments, TSDoc, test titles, conformance case names,
 * messages and docs say *why* in plain language; they never send a reader to a design document
 * the reader does not have: no chapter file names, no section signs, no "the spec", no numbered
 * scenarios and no bare rule ids.
 *
 * Prose is what is checked: in TypeScript files every identifier is blanked out before the lines
 * are searched (a fixture variable named like a rule id is code, not a citation), so comments,
 * strings and template text are what remain; Markdown and text files are searched whole.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { extname, join, relative } from 'node:path'
import ts from 'typescript'
import { describe, expect, test } from 'vitest'
import { root } from '../helpers/child-process.js'

/** What is searched: folders (recursively) and single files, relative to the repository root. */
const scanned: readonly string[] = [
  'src',
  'test',
  'examples',
  'bench',
  'scripts',
  'vitest.config.ts',
  'tsup.config.ts',
  'docs',
  'README.md',
  'CHANGELOG.md',
]

/** File kinds that hold prose worth checking. */
const extensions = new Set(['.ts', '.mts', '.cts', '.js', '.mjs', '.md', '.txt'])

/** The section sign, written as an escape so this file holds no citation of its own. */
const sectionSign = '\u00a7'

/** Pointers into the design documents: chapter files, section signs, "the spec", numbered scenarios. */
const chapterReference = new RegExp(`\\b0\\d-[a-z-]+\\.md\\b|${sectionSign}|\\bthe spec\\b|\\bscenarios? \\d+`, 'i')

/** A rule id: one or two capitals, one or two digits, an optional letter (`C6`, `WB7`, `J11a`). */
const ruleId = /\b[A-Z]{1,2}\d{1,2}[a-z]?\b/g

/**
 * Tokens shaped like rule ids that are ordinary words here. Keep this short: a new entry needs a
 * reason a reader would accept.
 */
const allowed = new Set([
  'V8', // the JavaScript engine
])

/** This file: its patterns and examples would match themselves. */
const self = 'test/project/own-words.test.ts'

/** Every file under the scanned paths, repository-relative. */
function filesOf(path: string): string[] {
  const absolute = join(root, path)
  if (!statSync(absolute).isDirectory()) return [path]
  return readdirSync(absolute, { withFileTypes: true })
    .filter((entry) => entry.name !== 'node_modules' && join(path, entry.name) !== join('docs', 'api'))
    .flatMap((entry) =>
      entry.isDirectory()
        ? filesOf(join(path, entry.name))
        : extensions.has(extname(entry.name))
          ? [join(path, entry.name)]
          : [],
    )
}

/** `text` with every identifier replaced by spaces, so line numbers and columns stay put. */
function withoutIdentifiers(file: string, text: string): string {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false)
  // Node offsets count UTF-16 code units, which is what split('') yields.
  const units = text.split('')
  const blank = (node: ts.Node): void => {
    if (ts.isIdentifier(node) || ts.isPrivateIdentifier(node)) {
      for (let index = node.getStart(source); index < node.end; index++) units[index] = ' '
      return
    }
    ts.forEachChild(node, blank)
  }
  blank(source)
  return units.join('')
}

/** Each offending line of `text` (the contents of `file`) as `file:line: text`. */
function offences(file: string, text: string): string[] {
  const prose = /\.[mc]?[jt]s$/.test(file) ? withoutIdentifiers(file, text) : text
  const original = text.split('\n')
  return prose.split('\n').flatMap((line, index) => {
    const ids = [...line.matchAll(ruleId)].map((match) => match[0]).filter((token) => !allowed.has(token))
    if (!chapterReference.test(line) && ids.length === 0) return []
    return [`${file}:${index + 1}: ${original[index]?.trim()}`]
  })
}

describe('the project speaks in its own words', () => {
  test('no chapter references, section signs, numbered scenarios or rule ids in the scanned files', () => {
    const files = scanned
      .flatMap(filesOf)
      .map((file) => relative(root, join(root, file)))
      .filter((file) => file !== self)
    expect(files.length).toBeGreaterThan(100)
    const found = files.flatMap((file) => offences(file, readFileSync(join(root, file), 'utf8')))
    expect(found, `design-document citations found:\n${found.join('\n')}`).toEqual([])
  })

  test('the check flags citations in comments and strings but not identifiers or allowed words', () => {
    const sample = [
      'const H1 = 1 // fine: the variable is code',
      "const engine = 'V8'",
      // A chapter file name and a section, assembled so that this file cites nothing itself.
      `// the log is truth (${['03', 'persistence'].join('-')}.md ${sectionSign}8)`,
      "test('J13', () => {})",
      '/** Parses the header (K2). */',
      "describe('scenario 40: resumes', () => {})",
    ].join('\n')
    expect(offences('sample.ts', sample).map((line) => line.split(':')[1])).toEqual(['3', '4', '5', '6'])
    expect(offences('sample.md', 'See the spec.\nPlain words.')).toEqual(['sample.md:1: See the spec.'])
  })
})
