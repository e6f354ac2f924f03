// The last build step (`npm run build`): each deployed process as one file,
// dist/apps/<app>/bundle.js, bundled by esbuild from tsc's output (which already carries the
// decorator metadata Nest needs), and started by dist/apps/<app>/main.js, the loader
// (scripts/app-loader.ts) that runs the bundle with V8's code for it kept on disk between starts.
// Why: a process loads one file instead of about 1,400 modules, each found, read and wrapped on
// its own, and a start of a build that ran before reuses the compiled code instead of compiling
// 2 to 8 MB again; docs/benchmarks.md ("Process start") has the figures. tsc's unbundled entry
// (dist/apps/<app>/src/main.js) is left in place and runs the same program.
import { build, type Plugin } from 'esbuild';
import { isAscii } from 'node:buffer';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { escapeNonAscii } from './ascii-source';

const DIST = join(__dirname, '..');

/** The processes that are deployed or spawned many times; `npm start`'s launcher is not one. */
const BUNDLED_APPS = ['api', 'poller', 'demo-server', 'cli'] as const;

/**
 * Left to Node's own `require` at run time, each for a reason:
 * - Nest's optional packages, which it loads in a try/catch and we do not install, and
 *   `pg-native`, which pg loads only when asked to;
 * - `typeorm`: required lazily, by the migrator only (libs/persistence/src/data-source.ts);
 * - `swagger-ui-dist`: serves its files from its own folder, found through `__dirname`;
 * - `pino` and `thread-stream`: their transports start workers from files beside their own code
 *   (the gateway's logs use no transport today; kept out so that adding one keeps working);
 * - `load-esm`: Nest's way to `import()` an ES module by name (file-type, for upload validation);
 *   the bundle has no `import()` of its own (below), so it stays a file Node loads.
 */
const EXTERNAL = [
  '@nestjs/microservices',
  '@nestjs/websockets',
  'class-transformer/storage',
  'pg-native',
  'typeorm',
  'swagger-ui-dist',
  'pino',
  'thread-stream',
  'load-esm',
];

/** Each input file's ASCII text when it had other characters, kept across the four builds. */
const escapedFiles = new Map<string, Promise<string | undefined>>();

/**
 * Makes the bundles ASCII (scripts/ascii-source.ts says why): a file with other characters is
 * handed to esbuild with them escaped, or as it is when that cannot be done safely (the bundle
 * then stays UTF-8, and the loader reads it so).
 */
const asciiSource: Plugin = {
  name: 'ascii-source',
  setup(bundle) {
    bundle.onLoad({ filter: /\.[cm]?js$/ }, async ({ path }) => {
      let escaped = escapedFiles.get(path);
      if (!escaped) {
        escaped = readFile(path).then((bytes) =>
          isAscii(bytes) ? undefined : escapeNonAscii(bytes.toString('utf8'), path),
        );
        escapedFiles.set(path, escaped);
      }
      const contents = await escaped;
      return contents === undefined ? undefined : { contents, loader: 'js' };
    });
  },
};

async function main(): Promise<void> {
  await Promise.all(
    BUNDLED_APPS.map(async (app) => {
      await build({
        entryPoints: [join(DIST, 'apps', app, 'src', 'main.js')],
        outfile: join(DIST, 'apps', app, 'bundle.js'),
        bundle: true,
        platform: 'node',
        target: 'node20',
        format: 'cjs',
        // Nest and the logs name classes (logger contexts, provider names in errors).
        keepNames: true,
        // Chained to tsc's maps, so `node --enable-source-maps` points at the TypeScript.
        sourcemap: 'linked',
        external: EXTERNAL,
        plugins: [asciiSource],
        // `import()` of a built-in (the OTLP exporter's http, node:crypto) becomes `require`.
        // The loader runs the bundle through node:vm, and on Node 20 a script compiled from
        // kept code has no dynamic-import callback: its `import()` would fail.
        supported: { 'dynamic-import': false },
        logLevel: 'error',
      });
      // The entry beside it: scripts/app-loader.ts, which runs bundle.js with its code cache.
      await build({
        entryPoints: [join(DIST, 'scripts', 'app-loader.js')],
        outfile: join(DIST, 'apps', app, 'main.js'),
        bundle: true,
        platform: 'node',
        target: 'node20',
        format: 'cjs',
        logLevel: 'error',
      });
    }),
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`bundle-apps: ${String(error)}\n`);
  process.exit(1);
});
