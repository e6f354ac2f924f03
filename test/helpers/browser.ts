import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { toolAvailable } from './external-tool';
import { useFixture } from './fixture';
import { processScope } from './process-scope';
import { ROOT } from './processes';

/** Debian's Chromium (`apt-get install chromium`; .ci/run installs it). */
export const CHROMIUM = '/usr/bin/chromium';

/**
 * Headless, as root (no sandbox), and quiet: the closed test network refuses the browser's own
 * background connections (updates, sync, field trials, QUIC probes), which otherwise stall it.
 * Playwright gives every launch a fresh temporary profile (`--user-data-dir`).
 */
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Screenshots the browser tests keep (git-ignored); docs/console/ holds copies for the docs. */
export const SCREENSHOT_DIR = join(ROOT, 'test-output', 'console');

/**
 * Whether the browser tests can run: outside CI a missing Chromium skips them with a warning;
 * under CI=true it fails (toolAvailable throws), so CI never goes green by skipping them.
 */
export function chromiumAvailable(): boolean {
  const found = toolAvailable(CHROMIUM, ['--version']);
  if (!found) {
    console.warn(`${CHROMIUM} not found: browser tests skipped (Debian: apt-get install chromium)`);
  }
  return found;
}

/**
 * A headless Chromium for the test file, driven by playwright-core, closed in afterAll. Playwright
 * spawns it, so it joins the file's process scope as the browser itself: closed with the scope's
 * other processes if afterAll never got to it.
 */
export function useBrowser(): Browser {
  return useFixture(
    'the browser',
    async () => {
      const scope = processScope('Chromium (useBrowser)');
      const browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: CHROMIUM_ARGS,
        headless: true,
      });
      scope?.add({ what: 'Chromium (playwright-core)', stop: () => browser.close() });
      return browser;
    },
    (browser) => browser.close(),
  );
}

/** Keeps a screenshot of the page as test output: test-output/console/<name>.png. */
export async function keepScreenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
}
