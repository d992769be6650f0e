/**
 * `npm start`: builds a harness with one small plugin, prints its description and its
 * inspection, and closes it. (The agent issue replaces this with the real main job.)
 */
import { createHarness, defineEvents, definePlugin, defineService, type Emit } from 'yoke'

interface Greeter {
  greet(name: string): string
}

declare module 'yoke' {
  interface YokeEvents {
    'greeter/greeted': Emit<{ readonly name: string }>
  }
}

const greeterEvents = defineEvents<{ 'greeter/greeted': Emit<{ readonly name: string }> }>({
  'greeter/greeted': 'emit',
})

const GreeterKey = defineService<Greeter>('greeter/service', 'says hello')

const greeter = definePlugin({
  name: 'greeter',
  provides: [GreeterKey],
  events: [greeterEvents],
  apply(ctx) {
    ctx.provide(GreeterKey, {
      greet(name) {
        ctx.emit('greeter/greeted', { name })
        return `hello, ${name}`
      },
    })
    return () => console.log('greeter stopped')
  },
})

const harness = await createHarness({ plugins: [greeter] })
harness.on('greeter/greeted', ({ name }) => console.log(`(greeted ${name})`))
console.log(harness.ctx.get(GreeterKey).greet('world'))

const description = harness.describe()
console.log('\nComposed entries (id, source, start index):')
for (const entry of description.entries) {
  console.log(`  ${entry.id.padEnd(14)} ${entry.source.padEnd(12)} ${entry.startIndex ?? 'disabled'}`)
}
console.log('\nServices:', harness.inspect().services.map((service) => `${service.key} (${service.owner})`).join(', '))
await harness.close()
