/**
 * One headless Chromium per test worker, shared by every file the worker runs:
 * vitest's isolate: false keeps this module, and so the browser, for the
 * worker's life. A file opens its own browser contexts (cookies, storage and
 * pages of its own) and closes them; it never closes the browser. When the
 * worker's process exits, Playwright kills the browser and removes its profile.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM_PATH);

let exitsOnSigterm = false;

/**
 * Vitest stops a worker with SIGTERM, and SIGKILLs it half a second later;
 * left to itself, SIGTERM ends the process without its 'exit' handlers. Exiting
 * at once runs them: what is launched or made for the whole worker (the
 * browser, a built dashboard) is cleaned up there.
 */
export function exitOnSigterm(): void {
  if (exitsOnSigterm) return;
  exitsOnSigterm = true;
  process.once('SIGTERM', () => process.exit(143));
}

let shared: Promise<Browser> | undefined;

export function sharedBrowser(): Promise<Browser> {
  exitOnSigterm();
  shared ??= chromium
    .launch({
      executablePath: CHROMIUM_PATH,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--disable-sync'],
      // Playwright's own SIGTERM handler closes the browser slowly and leaves the process running.
      handleSIGTERM: false,
    })
    .then(
      (browser) => {
        // A browser that went away (it crashed, or a test closed it) is launched again for the next file.
        browser.once('disconnected', () => (shared = undefined));
        return browser;
      },
      (error: unknown) => {
        shared = undefined;
        throw error;
      },
    );
  return shared;
}
