// The last build step (`npm run build`): each deployed process as one file,
// dist/apps/<app>/bundle.js, bundled by esbuild from tsc's output (which already carries the
// decorator metadata Nest needs), and started by dist/apps/<app>/main.js, a two-line loader that
// first turns on Node's compile cache. Why: a process loads one file instead of about 1,400
// modules, each found, read and wrapped on its own, and on Node 22.1 or later (the image's Node
// 24) it also reuses V8's code for that file from the cache instead of compiling 2 to 8 MB again;
// docs/benchmarks.md ("Process start") has the figures. tsc's unbundled entry
// (dist/apps/<app>/src/main.js) is left in place and runs the same program.
import { build } from 'esbuild';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

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
 *   (the gateway's logs use no transport today; kept out so that adding one keeps working).
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
];

/**
 * The entry each deployment runs. The cache must be on before the bundle is required: Node
 * compiles a file whole when it loads it, so turning it on inside the bundle would be too late.
 * `enableCompileCache` never throws (a directory it cannot write leaves the cache off) and does
 * not exist before Node 22.1, where the bundle runs as it is. The cache's directory is Node's
 * choice: NODE_COMPILE_CACHE when set, else node-compile-cache in the temporary directory;
 * NODE_DISABLE_COMPILE_CACHE=1 turns it off (docs/operations.md, "Process start and Node's
 * compile cache").
 */
const LOADER = `'use strict';
// Written by scripts/bundle-apps.ts: Node's compile cache on, then the app (bundle.js).
require('node:module').enableCompileCache?.();
require('./bundle.js');
`;

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
        logLevel: 'error',
      });
      await writeFile(join(DIST, 'apps', app, 'main.js'), LOADER);
    }),
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`bundle-apps: ${String(error)}\n`);
  process.exit(1);
});
