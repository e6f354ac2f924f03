// The entry of each deployable: dist/apps/<app>/main.js, bundled from this file by
// scripts/bundle-apps.ts. It runs the app's one-file bundle (bundle.js beside it) with V8's
// compiled code of that file kept on disk between starts: the "warm code cache" of
// docs/operations.md ("Process start and the code cache"), measured in docs/benchmarks.md.
//
// Why not Node's own compile cache (Node 22.1+): it stores the code V8 produced when it compiled
// the file, which is little more than the top level, because V8 compiles most functions only when
// they are first called. This loader compiles the bundle itself (node:vm) and asks V8 for its
// code after the app has started, when every function start-up called has been compiled, so the
// next start of the same build skips that work too. It also works on Node 20, which has no
// compile cache. Anything unexpected (an old Node, a folder it may not use, a cache V8 rejects)
// leaves it to run the bundle as a plain `require`, as it would without a cache.
import { isAscii } from 'node:buffer';
import { lstatSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import * as nodeModule from 'node:module';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { debuglog } from 'node:util';
import * as vm from 'node:vm';
import * as zlib from 'node:zlib';

const BUNDLE = join(__dirname, 'bundle.js');
/** NODE_DEBUG=app-loader prints what the loader did with the cache (the tests read it). */
const debug = debuglog('app-loader');
/** How long after the bundle's top level returns its code is kept (the app has started by then). */
const KEEP_AFTER_MS = 2_000;
/** The cache file: this header (magic, CRC-32 and length of the bundle's source), then V8's data. */
const MAGIC = 0x4d544743; // "MTGC"
const HEADER_BYTES = 12;

interface CacheFile {
  path: string;
  crc: number;
  sourceBytes: number;
}

run();

function run(): void {
  const folder = cacheFolder();
  if (!folder) {
    debug('code cache off');
    module.require(BUNDLE);
    return;
  }
  // Node's own cache (22.1+) for the few packages the bundle leaves to `require` (typeorm, which
  // the migrator loads): in NODE_COMPILE_CACHE when set, else in Node's default folder.
  (nodeModule as unknown as NodeCompileCache).enableCompileCache?.(
    process.env.NODE_COMPILE_CACHE || undefined,
  );
  const source = readFileSync(BUNDLE);
  const cache: CacheFile = {
    // One file per bundle on disk, so two checkouts or builds side by side do not evict each other.
    path: join(
      folder,
      `${basename(__dirname)}-${zlib.crc32(BUNDLE).toString(16).padStart(8, '0')}.bin`,
    ),
    crc: zlib.crc32(source),
    sourceBytes: source.length,
  };
  const cachedData = readCache(cache);
  const script = new vm.Script(wrap(readSource(source)), {
    filename: BUNDLE,
    cachedData,
  });
  if (cachedData && !script.cachedDataRejected) {
    debug('code cache used: %s', cache.path);
  } else {
    debug(cachedData ? 'code cache rejected by V8' : 'no code cache yet');
    keepCodeLater(script, cache);
  }
  const app = script.runInThisContext({ displayErrors: true }) as CommonJsBody;
  app.call(
    module.exports,
    module.exports,
    nodeModule.createRequire(BUNDLE),
    module,
    BUNDLE,
    __dirname,
  );
}

/**
 * The bundle's text. An ASCII bundle (scripts/ascii-source.ts) is read as Latin-1, the same text:
 * V8 then holds one byte a character instead of two, and Node 20 decodes it in less than half the
 * time UTF-8 takes.
 */
function readSource(source: Buffer): string {
  return isAscii(source) ? source.toString('latin1') : source.toString('utf8');
}

/** node:module's compile cache, which @types/node 20 does not describe. */
interface NodeCompileCache {
  enableCompileCache?: (directory?: string) => unknown;
}

type CommonJsBody = (
  exports: unknown,
  require: NodeJS.Require,
  module: NodeJS.Module,
  filename: string,
  dirname: string,
) => void;

/** The bundle as Node itself would run it: the CommonJS function wrapper around its source. */
function wrap(source: string): string {
  return `(function (exports, require, module, __filename, __dirname) { ${source}\n});`;
}

/**
 * The folder where this bundle's code is kept, or nothing when the cache is off: NODE_DISABLE_COMPILE_CACHE=1,
 * `--enable-source-maps` (Node maps the stacks of files it loads itself, not of node:vm scripts),
 * a Node without zlib.crc32 (before 20.15), or a folder that is not this user's alone. The folder
 * is this user's own, in NODE_COMPILE_CACHE or else straight in the temporary directory (whose
 * sticky bit keeps other users from moving it), one per Node version.
 */
function cacheFolder(): string | undefined {
  if (
    process.env.NODE_DISABLE_COMPILE_CACHE === '1' ||
    (process as { sourceMapsEnabled?: boolean }).sourceMapsEnabled ||
    typeof zlib.crc32 !== 'function'
  ) {
    return undefined;
  }
  const uid = process.getuid?.();
  const folder = join(
    process.env.NODE_COMPILE_CACHE || tmpdir(),
    `mcp-task-gateway-code-${process.version}-${process.arch}-${uid ?? 'any'}`,
  );
  try {
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    // Code read from here is run: a folder another user could write to must not be used.
    const stat = lstatSync(folder);
    if (!stat.isDirectory() || (uid !== undefined && stat.uid !== uid) || stat.mode & 0o022) {
      return undefined;
    }
  } catch {
    return undefined;
  }
  return folder;
}

/** The kept code when it was made from this very source, else nothing. */
function readCache(cache: CacheFile): Buffer | undefined {
  let data: Buffer;
  try {
    data = readFileSync(cache.path);
  } catch {
    return undefined;
  }
  if (
    data.length <= HEADER_BYTES ||
    data.readUInt32LE(0) !== MAGIC ||
    data.readUInt32LE(4) !== cache.crc ||
    data.readUInt32LE(8) !== cache.sourceBytes
  ) {
    return undefined;
  }
  return data.subarray(HEADER_BYTES);
}

/**
 * Writes the script's code once: KEEP_AFTER_MS after start, or at exit if that comes first (a
 * CLI run). Written to a temporary name and renamed, so a reader never sees half a file.
 */
function keepCodeLater(script: vm.Script, cache: CacheFile): void {
  let kept = false;
  const keep = (): void => {
    if (kept) return;
    kept = true;
    process.removeListener('exit', keep);
    const header = Buffer.alloc(HEADER_BYTES);
    header.writeUInt32LE(MAGIC, 0);
    header.writeUInt32LE(cache.crc, 4);
    header.writeUInt32LE(cache.sourceBytes, 8);
    const temporary = `${cache.path}.${process.pid}`;
    const started = process.hrtime.bigint();
    try {
      writeFileSync(temporary, Buffer.concat([header, script.createCachedData()]), { mode: 0o600 });
      renameSync(temporary, cache.path);
      debug(
        'code cache written: %s (%d ms)',
        cache.path,
        Number(process.hrtime.bigint() - started) / 1e6,
      );
    } catch {
      // A full or read-only disk: the next start compiles again, nothing else changes.
      rmSync(temporary, { force: true });
    }
  };
  setTimeout(keep, KEEP_AFTER_MS).unref();
  process.once('exit', keep);
}
