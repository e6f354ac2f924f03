import { existsSync } from 'node:fs';
import { join } from 'node:path';

/** dist/, the compiled build (this file is dist/bench/lib/poller-gate.js). */
export const DIST = join(__dirname, '..', '..');
export const POLLER_MAIN = join(DIST, 'apps', 'poller', 'main.js');
export const DEMO_SERVER_MAIN = join(DIST, 'apps', 'demo-server', 'main.js');
const CLAIM_LOOP = join(DIST, 'apps', 'poller', 'src', 'claiming', 'claim-loop.service.js');

/**
 * Why a poller benchmark cannot run yet, or undefined when it can. The poller's entry point
 * exists from the skeleton on; the claim loop is what makes it claim anything.
 */
export function pollerMissing(): string | undefined {
  for (const file of [POLLER_MAIN, CLAIM_LOOP, DEMO_SERVER_MAIN]) {
    if (!existsSync(file)) return `poller not built (${file.slice(DIST.length + 1)} missing)`;
  }
  return undefined;
}
