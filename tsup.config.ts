import { defineConfig } from 'tsup'

export default defineConfig({
  entry: {
    index: 'src/index.ts',
    testing: 'src/testing/index.ts',
    sqlite: 'src/sqlite/index.ts',
    postgres: 'src/postgres/index.ts',
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
      mcp: 'src/mcp/index.ts',
    },
  },
  sourcemap: true,
  clean: true,
  target: 'node20',
  platform: 'node',
  splitting: false,
  treeshake: false,
  // `import.meta.url` in the CommonJS build too: optional peers are required relative to Yoke's own files.
  shims: true,
})
