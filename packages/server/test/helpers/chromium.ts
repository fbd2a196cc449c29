/**
 * One headless Chromium per test worker, shared by every file the worker runs:
 * vitest's isolate: false keeps this module, and so the browser, for the
 * worker's life. A file opens its own browser contexts (cookies, storage and
 * pages of its own) and closes them; it never closes the browser. When the
 * worker's process exits, Playwright kills the browser and removes its profile.
 */
import { existsSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
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

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * A worker SIGKILLed before its exit handlers ran (a loaded machine may not
 * run it within vitest's half second) leaves its browser's profile and its
 * dashboard build in the temporary directory. The next launch removes those
 * whose owner no longer runs: a profile's Chromium lock names its process, a
 * build's `.owner` file names the worker's.
 */
function removeLeftovers(): void {
  const tmp = os.tmpdir();
  const host = os.hostname();
  for (const name of readdirSync(tmp)) {
    const dir = path.join(tmp, name);
    try {
      let owner: RegExpExecArray | null = null;
      if (name.startsWith('playwright_chromiumdev_profile-')) owner = /^(.+)-(\d+)$/.exec(readlinkSync(path.join(dir, 'SingletonLock')));
      else if (name.startsWith(DASHBOARD_BUILD_PREFIX)) owner = /^(.+)-(\d+)$/.exec(readFileSync(path.join(dir, OWNER_FILE), 'utf8'));
      if (owner && owner[1] === host && !running(Number(owner[2]))) rmSync(dir, { recursive: true, force: true });
    } catch {
      // No lock or owner file: in use, being removed, or not made by these tests.
    }
  }
}

/** Where a worker builds the dashboard (e2e-helpers.ts), and the file naming the worker, as `host-pid`. */
export const DASHBOARD_BUILD_PREFIX = 'pail-dashboard-';
export const OWNER_FILE = '.owner';
export const owner = () => `${os.hostname()}-${process.pid}`;

let shared: Promise<Browser> | undefined;

export function sharedBrowser(): Promise<Browser> {
  exitOnSigterm();
  if (!shared) removeLeftovers();
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
