import { describe, expect, test } from 'vitest'
import { type Context, ContextDisposedError, InvalidArgumentError, ScopeLinkError } from 'yoke'
import { inspectContext } from '../../src/kernel/index.js'
import { thrownBy } from '../helpers/outcomes.js'
import { testRoot } from '../helpers/root.js'

function scopeKey(id: string): { readonly id: string } {
  return { id }
}

/** Registers an emit listener on `ctx` for test/e that records `name`. */
function record(ctx: Context, name: string, log: string[]): void {
  ctx.on('test/e', () => {
    log.push(name)
  })
}

describe('scope tags', () => {
  test('a child tagged with a scope reads it; descendants inherit it; a nested tag shadows it', () => {
    const { root } = testRoot()
    const a = scopeKey('a')
    const b = scopeKey('b')
    const tagged = root.child('tagged', { scope: a })
    const inherited = tagged.child('plain').child('deeper')
    const shadowed = tagged.child('nested', { scope: b })
    expect(root.scope).toBeUndefined()
    expect(root.child('untagged').scope).toBeUndefined()
    expect(tagged.scope).toBe(a)
    expect(inherited.scope).toBe(a)
    expect(shadowed.scope).toBe(b)
    expect(shadowed.child('under').scope).toBe(b)
  })

  test("a listener is tagged with the scope of the context it was registered through; the root's are untagged", () => {
    const { root } = testRoot()
    const a = scopeKey('a')
    const log: string[] = []
    record(root, 'root', log)
    record(root.child('tagged', { scope: a }).child('inherits'), 'inherited', log)
    root.emit('test/e', 1)
    expect(log).toEqual(['root'])
    log.length = 0
    root.emit('test/e', 1, { scope: a })
    expect(log).toEqual(['root', 'inherited'])
  })
})

describe('scoped admission and parent chain', () => {
  test('dispatch reaches untagged listeners and those tagged along the chain, flowing up and never down', () => {
    const { root } = testRoot()
    const a = scopeKey('a')
    const b = scopeKey('b')
    const p = scopeKey('p')
    const log: string[] = []
    record(root, 'G', log)
    record(root.child('a', { scope: a }), 'A', log)
    record(root.child('b', { scope: b }), 'B', log)

    root.emit('test/e', 1, { scope: a })
    expect(log).toEqual(['G', 'A'])
    log.length = 0
    root.emit('test/e', 1)
    expect(log).toEqual(['G'])
    log.length = 0

    root.scopes.bindParent(a, p)
    record(root.child('p', { scope: p }), 'P', log)
    root.emit('test/e', 1, { scope: a })
    expect(log).toEqual(['G', 'A', 'P'])
    log.length = 0
    root.emit('test/e', 1, { scope: p })
    expect(log).toEqual(['G', 'P'])
    expect(root.scopes.chain(a)).toEqual([a, p])
    expect(root.scopes.chain(a)[0]).toBe(a)
    expect(root.scopes.chain(a)[1]).toBe(p)
  })

  test('a dispatch with an unrelated scope reaches untagged listeners only', () => {
    const { root } = testRoot()
    const log: string[] = []
    record(root, 'G', log)
    record(root.child('a', { scope: scopeKey('a') }), 'A', log)
    root.emit('test/e', 1, { scope: scopeKey('a') })
    expect(log).toEqual(['G'])
  })

  test('admission follows a grandparent chain and updates when links change', async () => {
    const { root } = testRoot()
    const agent = scopeKey('agent')
    const session = scopeKey('session')
    const workspace = scopeKey('workspace')
    const log: string[] = []
    record(root.child('workspace', { scope: workspace }), 'W', log)
    root.scopes.bindParent(agent, session)
    const upper = root.scopes.bindParent(session, workspace)
    root.emit('test/e', 1, { scope: agent })
    expect(log).toEqual(['W'])
    expect(root.scopes.chain(agent)).toEqual([agent, session, workspace])
    await upper()
    log.length = 0
    root.emit('test/e', 1, { scope: agent })
    expect(log).toEqual([])
    expect(root.scopes.chain(agent)).toEqual([agent, session])
  })

  test('the rule is the same for parallel, serial and waterfall', async () => {
    const { root } = testRoot()
    const a = scopeKey('a')
    const p = scopeKey('p')
    root.scopes.bindParent(a, p)
    const tagged = root.child('tagged', { scope: p })
    const other = root.child('other', { scope: scopeKey('other') })
    const log: string[] = []
    tagged.on('test/p', () => {
      log.push('parallel:P')
    })
    other.on('test/p', () => {
      log.push('parallel:other')
    })
    tagged.on('test/s', () => 'serial:P')
    other.on('test/s', () => 'serial:other')
    tagged.on('test/w', async (_payload, next) => `P(${String(await next())})`)
    other.on('test/w', () => 'other decided')

    await root.parallel('test/p', 1, { scope: a })
    await root.parallel('test/p', 1)
    expect(log).toEqual(['parallel:P'])
    await expect(root.serial('test/s', 1, { scope: a })).resolves.toBe('serial:P')
    await expect(root.serial('test/s', 1)).resolves.toBeUndefined()
    await expect(root.waterfall('test/w', { n: 1 }, () => 'inner', { scope: a })).resolves.toBe('P(inner)')
    await expect(root.waterfall('test/w', { n: 1 }, () => 'inner')).resolves.toBe('inner')
  })

  test('chain of an unlinked key is the key alone, and it is frozen', () => {
    const { root } = testRoot()
    const alone = scopeKey('alone')
    const chain = root.scopes.chain(alone)
    expect(chain).toEqual([alone])
    expect(Object.isFrozen(chain)).toBe(true)
  })
})

describe('link errors', () => {
  test('linking a linked key throws already-bound; closing a cycle throws cycle; rebind moves the link', () => {
    const { root } = testRoot()
    const a = scopeKey('a')
    const p = scopeKey('p')
    const q = scopeKey('q')
    const x = scopeKey('x')
    const link = root.scopes.bindParent(a, p)

    const alreadyBound = thrownBy(() => root.scopes.bindParent(a, q))
    expect(ScopeLinkError.is(alreadyBound)).toBe(true)
    expect(alreadyBound).toMatchObject({ code: 'SCOPE_LINK', reason: 'already-bound', key: a })

    const cycle = thrownBy(() => root.scopes.bindParent(p, a))
    expect(ScopeLinkError.is(cycle)).toBe(true)
    expect(cycle).toMatchObject({ code: 'SCOPE_LINK', reason: 'cycle', key: p })

    const selfLink = thrownBy(() => root.scopes.bindParent(x, x))
    expect(ScopeLinkError.is(selfLink)).toBe(true)
    expect(selfLink).toMatchObject({ code: 'SCOPE_LINK', reason: 'cycle', key: x })

    expect(root.scopes.chain(a)).toEqual([a, p])
    expect(root.scopes.chain(p)).toEqual([p])
    expect(root.scopes.chain(x)).toEqual([x])

    link.rebind(q)
    expect(root.scopes.chain(a)).toEqual([a, q])
  })

  test('a refused link registers nothing', () => {
    const { root } = testRoot()
    const a = scopeKey('a')
    root.scopes.bindParent(a, scopeKey('p'))
    const count = (): number =>
      inspectContext(root).effects.children.filter((node) => node.kind === 'scope-link').length
    expect(count()).toBe(1)
    thrownBy(() => root.scopes.bindParent(a, scopeKey('q')))
    thrownBy(() => root.scopes.bindParent(a, a))
    expect(count()).toBe(1)
  })

  test('a longer cycle is detected', () => {
    const { root } = testRoot()
    const a = scopeKey('a')
    const b = scopeKey('b')
    const c = scopeKey('c')
    root.scopes.bindParent(a, b)
    root.scopes.bindParent(b, c)
    const error = thrownBy(() => root.scopes.bindParent(c, a))
    expect(error).toMatchObject({ code: 'SCOPE_LINK', reason: 'cycle', key: c })
    expect(root.scopes.chain(c)).toEqual([c])
  })

  test('rebind is cycle-checked and leaves the link in place when refused', () => {
    const { root } = testRoot()
    const a = scopeKey('a')
    const p = scopeKey('p')
    const q = scopeKey('q')
    const link = root.scopes.bindParent(a, p)
    root.scopes.bindParent(q, a)
    const error = thrownBy(() => link.rebind(q))
    expect(ScopeLinkError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'SCOPE_LINK', reason: 'cycle', key: a })
    expect(root.scopes.chain(a)).toEqual([a, p])
    expect(root.scopes.chain(q)).toEqual([q, a, p])
  })

  test('a link is an effect labelled scope-link; disposing it removes the link and frees the key', async () => {
    const { root } = testRoot()
    const a = scopeKey('a')
    const p = scopeKey('p')
    const q = scopeKey('q')
    const link = root.scopes.bindParent(a, p)
    expect(link.label).toBe('scope-link')
    expect(inspectContext(root).effects.children.at(-1)).toEqual({
      label: 'scope-link',
      kind: 'scope-link',
      children: [],
    })
    await link()
    expect(link.disposed).toBe(true)
    expect(root.scopes.chain(a)).toEqual([a])
    root.scopes.bindParent(a, q)
    expect(root.scopes.chain(a)).toEqual([a, q])
  })

  test('rebinding a disposed link throws ScopeLinkError and does not relink', async () => {
    const { root } = testRoot()
    const a = scopeKey('a')
    const link = root.scopes.bindParent(a, scopeKey('p'))
    await link()
    const error = thrownBy(() => link.rebind(scopeKey('q')))
    expect(ScopeLinkError.is(error)).toBe(true)
    expect(root.scopes.chain(a)).toEqual([a])
  })

  test('disposing the context of a link removes it', async () => {
    const { root } = testRoot()
    const a = scopeKey('a')
    const p = scopeKey('p')
    const owner = root.child('owner')
    owner.scopes.bindParent(a, p)
    expect(root.scopes.chain(a)).toEqual([a, p])
    await owner.dispose()
    expect(root.scopes.chain(a)).toEqual([a])
  })

  test('bindParent through a disposed context throws ContextDisposedError', async () => {
    const { root } = testRoot()
    const owner = root.child('owner')
    await owner.dispose()
    const error = thrownBy(() => owner.scopes.bindParent(scopeKey('a'), scopeKey('p')))
    expect(ContextDisposedError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'CONTEXT_DISPOSED', context: 'harness/owner', operation: 'bindParent' })
  })

  test.each([
    ['key', (root: Context) => root.scopes.bindParent('a' as unknown as object, {})],
    ['parent', (root: Context) => root.scopes.bindParent({}, null as unknown as object)],
  ])('a %s that is not an object throws InvalidArgumentError', (argument, bind) => {
    const { root } = testRoot()
    const error = thrownBy(() => bind(root))
    expect(InvalidArgumentError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'INVALID_ARGUMENT', argument })
  })
})

describe('scope graph per root', () => {
  test('two roots never see each other’s links', () => {
    const first = testRoot().root
    const second = testRoot().root
    const a = scopeKey('a')
    const p = scopeKey('p')
    first.scopes.bindParent(a, p)
    expect(first.scopes.chain(a)).toEqual([a, p])
    expect(second.scopes.chain(a)).toEqual([a])
    second.scopes.bindParent(a, scopeKey('q'))
    expect(first.scopes.chain(a)).toEqual([a, p])
  })

  test('every context of one root sees the same links', () => {
    const { root } = testRoot()
    const a = scopeKey('a')
    const p = scopeKey('p')
    root.child('left').scopes.bindParent(a, p)
    expect(root.child('right').scopes.chain(a)).toEqual([a, p])
    const error = thrownBy(() => root.child('other').scopes.bindParent(a, scopeKey('q')))
    expect(error).toMatchObject({ reason: 'already-bound' })
  })
})
