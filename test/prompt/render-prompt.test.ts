import fc from 'fast-check'
import { describe, expect, it, test } from 'vitest'
import { InvalidArgumentError, PromptRenderError, renderPrompt } from 'yoke'
import type { PromptVariables } from '../../src/prompt/index.js'

function renderError(
  template: Parameters<typeof renderPrompt>[0],
  variables: PromptVariables,
  options?: Parameters<typeof renderPrompt>[2],
): PromptRenderError {
  try {
    renderPrompt(template, variables, options)
  } catch (error) {
    expect(PromptRenderError.is(error), String(error)).toBe(true)
    return error as PromptRenderError
  }
  throw new Error('renderPrompt did not throw')
}

function argumentError(action: () => unknown): InvalidArgumentError {
  try {
    action()
  } catch (error) {
    expect(InvalidArgumentError.is(error), String(error)).toBe(true)
    return error as InvalidArgumentError
  }
  throw new Error('nothing was thrown')
}

const section = (text: string) => [{ name: 's', text }]

describe('renderPrompt outcomes', () => {
  test('an unknown variable lists the registered names, sorted', () => {
    const error = renderError(section('{{x}}'), { b: '2', a: '1' })
    expect(error.code).toBe('PROMPT_VARIABLE_UNKNOWN')
    expect(error.variable).toBe('x')
    expect(error.reference).toBe('{{x}}')
    expect(error.registered).toEqual(['a', 'b'])
    expect(error.section).toBe('s')
    expect(error.sectionKind).toBe('section')
    expect(error.message).toBe('unknown variable "{{x}}" in section "s" (registered: a, b)')
  })

  test('an unknown variable with nothing registered says none', () => {
    const error = renderError(section('{{x}}'), {})
    expect(error.code).toBe('PROMPT_VARIABLE_UNKNOWN')
    expect(error.registered).toEqual([])
    expect(error.message).toBe('unknown variable "{{x}}" in section "s" (registered: none)')
    expect(error.message.endsWith('(registered: none)')).toBe(true)
  })

  test('an own key whose value is undefined is UNDEFINED', () => {
    const error = renderError(section('{{who}}'), { who: undefined })
    expect(error.code).toBe('PROMPT_VARIABLE_UNDEFINED')
    expect(error.variable).toBe('who')
    expect(error.reference).toBe('{{who}}')
    expect(error.registered).toBeUndefined()
    expect(error.message).toBe('variable "{{who}}" has no value in this assembly (section "s")')
  })

  test.each([
    ['{{ model }}', '{{ model }}'],
    ['{{Model}}', '{{Model}}'],
    ['{{}}', '{{}}'],
    ['{{1a}}', '{{1a}}'],
    ['{{a-b}}', '{{a-b}}'],
    ['{{{model}}}', '{{{model}}'],
    ['{{a{b}}', '{{a{b}}'],
    ['{{a}b}}', '{{a}b}}'],
  ])('%j is malformed with reference %j', (text, reference) => {
    const error = renderError(section(text), { model: 'm', a: 'A' })
    expect(error.code).toBe('PROMPT_VARIABLE_MALFORMED')
    expect(error.reference).toBe(reference)
    expect(error.variable).toBeUndefined()
    expect(error.registered).toBeUndefined()
    expect(error.message).toBe(`malformed variable reference "${reference}" in section "s"`)
  })

  test('{{constructor}} with {} is unknown (own keys only)', () => {
    const error = renderError(section('{{constructor}}'), {})
    expect(error.code).toBe('PROMPT_VARIABLE_UNKNOWN')
    expect(error.variable).toBe('constructor')
    expect(renderError(section('{{to_string}}{{hasOwnProperty}}'), {}).code).toBe('PROMPT_VARIABLE_UNKNOWN')
  })

  test('a lone {{ with no later }} is prose', () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the scenario's shell-style text, on purpose
    const shell = 'use ${X:-{{fallback}'
    expect(renderPrompt(section(shell), {})).toBe(shell)
    expect(renderPrompt(shell, {})).toBe(shell)
  })

  test('values are copied verbatim and never scanned again', () => {
    expect(renderPrompt(section('{{v}}'), { v: '{{sneaky}}' })).toBe('{{sneaky}}')
    expect(renderPrompt(section('[{{v}}|{{w}}]'), { v: '{{w}}', w: '}}{{' })).toBe('[{{w}}|}}{{]')
  })
})

test('empty and whitespace-only sections are dropped, the rest joined with one blank line', () => {
  const sections = [
    { name: 'a', text: 'A' },
    { name: 'b', text: '' },
    { name: 'c', text: '{{e}}' },
    { name: 'd', text: '  ' },
    { name: 'f', text: 'B' },
  ]
  expect(renderPrompt(sections, { e: '' })).toBe('A\n\nB')
})

describe('renderPrompt', () => {
  test('a string template is one section named template', () => {
    expect(renderPrompt('Work in {{dir}}.', { dir: '/w' })).toBe('Work in /w.')
    const error = renderError('{{x}}', {})
    expect(error.section).toBe('template')
    expect(error.message).toBe('unknown variable "{{x}}" in section "template" (registered: none)')
  })

  test('all sections empty, or no sections, render to the empty string', () => {
    expect(renderPrompt([], {})).toBe('')
    expect(renderPrompt('', {})).toBe('')
    expect(
      renderPrompt(
        [
          { name: 'a', text: ' \n\t' },
          { name: 'b', text: '{{v}}' },
        ],
        { v: '\n' },
      ),
    ).toBe('')
  })

  test('a section is not trimmed: its own whitespace is kept', () => {
    expect(
      renderPrompt(
        [
          { name: 'a', text: ' A\n' },
          { name: 'b', text: 'B ' },
        ],
        {},
      ),
    ).toBe(' A\n\n\nB ')
  })

  test('the first bad reference, in section order, is reported', () => {
    const error = renderError(
      [
        { name: 'first', text: 'ok {{a}}' },
        { name: 'second', text: '{{missing}} and {{ bad }}' },
        { name: 'third', text: '{{ worse }}' },
      ],
      { a: 'A' },
    )
    expect(error.code).toBe('PROMPT_VARIABLE_UNKNOWN')
    expect(error.section).toBe('second')
    expect(error.registered).toEqual(['a'])
  })

  test('a section that would be dropped still fails on a bad reference', () => {
    expect(renderError([{ name: 'empty', text: '{{gone}}' }], { gone: undefined }).code).toBe(
      'PROMPT_VARIABLE_UNDEFINED',
    )
  })

  test("kind: 'context' names contexts in every message", () => {
    const contexts = (text: string) => [{ name: 'mode', text }]
    const options = { kind: 'context' } as const
    const malformed = renderError(contexts('{{ x }}'), {}, options)
    expect(malformed.sectionKind).toBe('context')
    expect(malformed.message).toBe('malformed variable reference "{{ x }}" in context "mode"')
    expect(renderError(contexts('{{x}}'), { y: 'Y' }, options).message).toBe(
      'unknown variable "{{x}}" in context "mode" (registered: y)',
    )
    expect(renderError(contexts('{{x}}'), { x: undefined }, options).message).toBe(
      'variable "{{x}}" has no value in this assembly (context "mode")',
    )
    expect(renderError(contexts('{{x}}'), {}, { kind: 'section' }).sectionKind).toBe('section')
  })

  test('a reference longer than 40 characters is cut to 40 plus …', () => {
    const long = `{{ ${'a'.repeat(50)} }}`
    const error = renderError(section(long), {})
    expect(error.reference).toBe(`${long.slice(0, 40)}…`)
    expect(error.reference).toHaveLength(41)
    expect(error.message).toBe(`malformed variable reference "${long.slice(0, 40)}…" in section "s"`)
    const name = `v${'x'.repeat(39)}`
    const unknown = renderError(section(`{{${name}}}`), {})
    expect(unknown.reference).toBe(`{{${name.slice(0, 38)}…`)
    expect(unknown.variable).toBe(name)
    const exactly40 = `{{ ${'b'.repeat(34)} }}`
    expect(exactly40).toHaveLength(40)
    expect(renderError(section(exactly40), {}).reference).toBe(exactly40)
  })

  test('adjacent references both render', () => {
    expect(renderPrompt('{{a}}{{b}}', { a: 'A', b: 'B' })).toBe('AB')
    expect(renderPrompt('{{a}}{{a}}{{a}}', { a: '-' })).toBe('---')
  })

  test('}} without {{ is prose', () => {
    expect(renderPrompt('a }} b }}}', {})).toBe('a }} b }}}')
    expect(renderPrompt('{x}} {{v}}', { v: 'V' })).toBe('{x}} V')
  })

  test('{{ at the end, or a run of braces with no later }}, is prose', () => {
    expect(renderPrompt('text {{', {})).toBe('text {{')
    expect(renderPrompt('{{', {})).toBe('{{')
    expect(renderPrompt('{{{{{', {})).toBe('{{{{{')
    expect(renderPrompt('{{v}} then {{', { v: 'V' })).toBe('V then {{')
    expect(renderPrompt('{{v}} {{x {{y }', { v: 'V' })).toBe('V {{x {{y }')
  })

  test('a lone {{ before a later }} is malformed even when a valid reference sits between', () => {
    const error = renderError('a {{b {{v}}', { v: 'V' })
    expect(error.code).toBe('PROMPT_VARIABLE_MALFORMED')
    expect(error.reference).toBe('{{b {{v}}')
  })

  test('unicode around references is copied unchanged', () => {
    expect(renderPrompt('héllo {{name}} — 日本語 🎉{{name}}🎉', { name: 'wörld 👋' })).toBe(
      'héllo wörld 👋 — 日本語 🎉wörld 👋🎉',
    )
    expect(renderPrompt('\u00a0{{v}}\u2028', { v: '' })).toBe('')
  })

  test('a null-prototype record works, and only own keys count', () => {
    const variables: Record<string, string | undefined> = Object.create(null)
    variables['x'] = 'X'
    expect(renderPrompt('{{x}}', variables)).toBe('X')
    expect(renderError('{{y}}', variables).registered).toEqual(['x'])
    const inherited = Object.create({ x: 'inherited' }) as Record<string, string>
    expect(renderError('{{x}}', inherited).code).toBe('PROMPT_VARIABLE_UNKNOWN')
  })

  test('the registered list includes names whose value is undefined', () => {
    expect(renderError('{{c}}', { b: undefined, a: 'A' }).registered).toEqual(['a', 'b'])
  })

  test('extra section fields (order, complete) are ignored', () => {
    expect(
      renderPrompt(
        [{ name: 'exact', order: 5, text: 'Exact prompt.', complete: true } as { name: string; text: string }],
        {},
      ),
    ).toBe('Exact prompt.')
  })

  test('a 200k-character template renders in one pass', () => {
    const unit = 'prose {{v}} {{ '
    const pieces = Math.ceil(200_000 / unit.length)
    const template = unit.repeat(pieces)
    expect(template.length).toBeGreaterThanOrEqual(200_000)
    // No `}}` after a lone `{{` here would be prose; a later `}}` makes the first lone `{{` malformed.
    expect(renderError(template, { v: 'V' }).reference).toBe('{{ prose {{v}}')
    const prose = 'prose {{v}} {{ '.replace('{{ ', '{ ').repeat(pieces) + '{{'.repeat(50_000)
    const rendered = renderPrompt(prose, { v: 'V' })
    expect(rendered).toBe('prose V { '.repeat(pieces) + '{{'.repeat(50_000))
    const braces = '{{'.repeat(100_000)
    expect(renderPrompt(braces, {})).toBe(braces)
  })

  describe('bad arguments throw InvalidArgumentError', () => {
    it.each([
      ['a number template', () => renderPrompt(42 as unknown as string, {}), 'template'],
      ['a null template', () => renderPrompt(null as unknown as string, {}), 'template'],
      ['a section that is not an object', () => renderPrompt(['x'] as unknown as [], {}), 'template[0]'],
      ['a section without a name', () => renderPrompt([{ text: 't' }] as unknown as [], {}), 'template[0].name'],
      [
        'a section with a numeric text',
        () =>
          renderPrompt(
            [
              { name: 'a', text: 'ok' },
              { name: 'b', text: 1 },
            ] as unknown as [],
            {},
          ),
        'template[1].text',
      ],
      ['null variables', () => renderPrompt('x', null as unknown as PromptVariables), 'variables'],
      ['string variables', () => renderPrompt('x', 'v' as unknown as PromptVariables), 'variables'],
      ['array variables', () => renderPrompt('x', [] as unknown as PromptVariables), 'variables'],
      ['a non-string value', () => renderPrompt('{{n}}', { n: 1 } as unknown as PromptVariables), 'variables.n'],
      ['a bad kind', () => renderPrompt('x', {}, { kind: 'prompt' } as unknown as { kind: 'section' }), 'options.kind'],
      ['non-object options', () => renderPrompt('x', {}, 'context' as unknown as { kind: 'section' }), 'options'],
    ])('%s', (_label, action, argument) => {
      const error = argumentError(action)
      expect(error.code).toBe('INVALID_ARGUMENT')
      expect(error.argument).toBe(argument)
    })

    test('an unreferenced non-string value is not inspected', () => {
      expect(renderPrompt('plain', { n: 1 } as unknown as PromptVariables)).toBe('plain')
    })
  })
})

describe('property: matches a naive replace-all', () => {
  const names = ['a', 'b', 'mode', 'agent_id', 'x9']
  const proseArbitrary = fc.string({ maxLength: 12 }).map((text) => text.replace(/[{}]/g, ''))
  const valueArbitrary = fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom('{{a}}', '}}', '{{', '{{mode}}'))
  const pieceArbitrary = fc.oneof(
    proseArbitrary.map((text) => ({ kind: 'prose' as const, text })),
    fc.constantFrom(...names).map((name) => ({ kind: 'reference' as const, name })),
  )
  const sectionArbitrary = fc.array(pieceArbitrary, { maxLength: 8 })
  const variablesArbitrary = fc.record(
    Object.fromEntries(names.map((name) => [name, valueArbitrary])) as Record<string, fc.Arbitrary<string>>,
  )

  function naive(template: string, variables: Record<string, string>): string {
    // One global-regex replace: replaced text is never searched again, like renderPrompt.
    return template.replace(/\{\{([a-z][a-z0-9_]*)\}\}/g, (_match, name: string) => variables[name] as string)
  }

  test('for templates of brace-free prose and references to defined strings', () => {
    fc.assert(
      fc.property(fc.array(sectionArbitrary, { maxLength: 4 }), variablesArbitrary, (sections, variables) => {
        const template = sections.map((pieces, index) => ({
          name: `s${index}`,
          text: pieces.map((piece) => (piece.kind === 'prose' ? piece.text : `{{${piece.name}}}`)).join(''),
        }))
        const expected = template
          .map((entry) => naive(entry.text, variables))
          .filter((text) => text.trim() !== '')
          .join('\n\n')
        expect(renderPrompt(template, variables)).toBe(expected)
      }),
      { numRuns: 300 },
    )
  })
})
