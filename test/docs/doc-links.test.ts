/**
 * The README, the CHANGELOG and every page in docs/ link only to files that exist, and speak the
 * project's own words: the design documents the code was first built from are not shipped, so a
 * reader could not follow a chapter reference or a rule id.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { expect, test } from 'vitest'
import { root } from '../helpers/child-process.js'

const pages = [
  'README.md',
  'CHANGELOG.md',
  ...readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
]

/** The anchors GitHub derives from a page's headings. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>()
  for (const match of markdown.matchAll(/^#{1,6} (.+)$/gm)) {
    const heading = match[1] ?? ''
    anchors.add(
      heading
        .toLowerCase()
        .replace(/[^\p{L}\p{N} _-]/gu, '')
        .replace(/ /g, '-'),
    )
  }
  return anchors
}

test.each(pages)('every relative link of %s resolves to a file (and heading) that exists', (page) => {
  const markdown = readFileSync(join(root, page), 'utf8')
    .replace(/```[\s\S]*?```/g, '')
    .replace(/`[^`\n]*`/g, '')
  const broken: string[] = []
  for (const match of markdown.matchAll(/\]\(([^)\s]+)\)/g)) {
    const target = match[1] ?? ''
    if (/^[a-z]+:/.test(target)) continue
    const [path = '', anchor] = target.split('#')
    const file = path === '' ? join(root, page) : join(root, dirname(page), path)
    if (!existsSync(file)) broken.push(target)
    else if (anchor !== undefined && file.endsWith('.md') && !anchorsOf(readFileSync(file, 'utf8')).has(anchor)) {
      broken.push(target)
    }
  }
  expect(broken).toEqual([])
})
