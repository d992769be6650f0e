import { defineConfig } from 'tsup'

export default defineConfig({
  entry: {
    index: 'src/index.ts',
    testing: 'src/testing/index.ts',
    sqlite: 'src/sqlite/index.ts',
    postgres: 'src/postgres/index.ts',
    'ai-sdk': 'src/ai-sdk/index.ts',
    mcp: 'src/mcp/index.ts',
    // The `yoke` bin (package.json `bin`): dist/cli.js, ESM, with the entry's shebang (tsup makes it executable).
    cli: 'src/cli/main.ts',
  },
  format: ['esm', 'cjs'],
  // The bin is no import target: declarations only for the library entry points.
  dts: {
    entry: {
      index: 'src/index.ts',
      testing: 'src/testing/index.ts',
      sqlite: 'src/sqlite/index.ts',
      postgres: 'src/postgres/index.ts',
      'ai-sdk': 'src/ai-sdk/index.ts',
      mcp: 'src/mcp/index.ts',
    },
  },
  // `yoke/mcp` takes its public types from the main entry (`import type … from 'yoke'`): left as an
  // import of the package itself, so a subpath's declarations share the main entry's types.
  external: ['yoke'],
  sourcemap: true,
  clean: true,
  target: 'node20',
  platform: 'node',
  splitting: false,
  treeshake: false,
  // `import.meta.url` in the CommonJS build too: optional peers are required relative to Yoke's own files.
  shims: true,
})
