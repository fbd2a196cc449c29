/**
 * What every end-to-end suite of the dashboard shares: the production build
 * it serves, headless Chromium, the console watch, screenshots and waits.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { expect } from 'vitest';

const here = path.dirname(fileURLToPath(import.meta.url));
const dashboardDir = path.resolve(here, '..');
export const screenshotDir = path.resolve(here, '../../../test-artifacts/screenshots');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

/** Generous waits: these suites share the machine with every other test file. */
export const STEP_TIMEOUT = 20_000;
export const poll = <T>(read: () => Promise<T> | T) => expect.poll(read, { timeout: STEP_TIMEOUT, interval: 100 });

/** Without Chromium the suites are skipped, except in CI, where a missing browser must fail. */
export const skipBrowserSuites = !existsSync(CHROMIUM) && !/^(1|true|yes)$/i.test(process.env.CI ?? '');
if (skipBrowserSuites) console.log(`[pail] dashboard end-to-end tests skipped: no Chromium at ${CHROMIUM} (set CHROMIUM_PATH)`);

/**
 * Builds the dashboard from its current sources into a temporary directory,
 * once per test file, and the servers serve that (DASHBOARD_DIR): the tests
 * never run against a stale packages/dashboard/dist, and never rewrite it.
 */
let built: Promise<string> | undefined;
export function buildDashboard(): Promise<string> {
  built ??= (async () => {
    const outDir = await mkdtemp(path.join(os.tmpdir(), 'pail-dashboard-'));
    const { build } = await import('vite');
    // Vitest sets NODE_ENV=test, and Vite would then bundle React's development
    // build; the test is about what ships, so build for production.
    const nodeEnv = process.env.NODE_ENV;
    process.env.NODE_ENV = 'production';
    try {
      await build({
        root: dashboardDir,
        configFile: path.join(dashboardDir, 'vite.config.ts'),
        mode: 'production',
        logLevel: 'warn',
        build: { outDir, emptyOutDir: true, sourcemap: false },
      });
    } finally {
      process.env.NODE_ENV = nodeEnv;
    }
    return outDir;
  })();
  return built;
}

/** For the file's afterAll. A worker runs several test files: the next one builds again. */
export async function removeBuiltDashboard(): Promise<void> {
  const dir = built;
  built = undefined;
  if (dir) await rm(await dir, { recursive: true, force: true });
}

export async function launch(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--disable-sync'],
  });
}

/** Collects console errors and uncaught exceptions; some may be allowed for one step. */
export class ConsoleWatch {
  readonly errors: string[] = [];
  private allowed: RegExp[] = [];

  attach(page: Page): void {
    page.on('console', (message) => {
      if (message.type() !== 'error') return;
      const text = message.text();
      if (this.allowed.some((pattern) => pattern.test(text))) return;
      this.errors.push(`${text} (${message.location().url})`);
    });
    page.on('pageerror', (error) => this.errors.push(`Uncaught: ${error.message}`));
  }

  async allowing<T>(patterns: RegExp[], step: () => Promise<T>): Promise<T> {
    this.allowed = patterns;
    try {
      return await step();
    } finally {
      this.allowed = [];
    }
  }
}

export async function shoot(page: Page, name: string): Promise<void> {
  // A sticky header would otherwise be drawn where the page happened to be scrolled.
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.setViewportSize(DESKTOP);
  await page.screenshot({ path: path.join(screenshotDir, `${name}-desktop.png`), fullPage: true, animations: 'disabled' });
  await page.setViewportSize(PHONE);
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: path.join(screenshotDir, `${name}-phone.png`), fullPage: true, animations: 'disabled' });
  await page.setViewportSize(DESKTOP);
}

export function randomBytes(size: number, seed: number): Buffer {
  const bytes = Buffer.alloc(size);
  let x = seed;
  for (let i = 0; i < size; i++) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    bytes[i] = x >> 16;
  }
  return bytes;
}
