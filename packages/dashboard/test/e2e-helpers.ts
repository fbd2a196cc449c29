/**
 * What every end-to-end suite of the dashboard shares: the production build
 * it serves, headless Chromium, the console watch, screenshots and waits.
 */
import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';
import { mkdir, mkdtemp, open, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BrowserContext, Page } from 'playwright-core';
import { expect } from 'vitest';
import { CHROMIUM_PATH, DASHBOARD_BUILD_PREFIX, exitOnSigterm, hasChromium, owner, OWNER_FILE, sharedBrowser } from '../../server/test/helpers/chromium.js';
import { startTestServer } from '../../server/test/helpers/server.js';

export { sharedBrowser } from '../../server/test/helpers/chromium.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const dashboardDir = path.resolve(here, '..');
export const screenshotDir = path.resolve(here, '../../../test-artifacts/screenshots');

export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

/** Generous waits: these suites share the machine with every other test file. */
export const STEP_TIMEOUT = 20_000;
export const poll = <T>(read: () => Promise<T> | T) => expect.poll(read, { timeout: STEP_TIMEOUT, interval: 100 });

/** Without Chromium the suites are skipped, except in CI, where a missing browser must fail. */
export const skipBrowserSuites = !hasChromium && !/^(1|true|yes)$/i.test(process.env.CI ?? '');
if (skipBrowserSuites) console.log(`[pail] dashboard end-to-end tests skipped: no Chromium at ${CHROMIUM_PATH} (set CHROMIUM_PATH)`);

/**
 * Builds the dashboard from its current sources into a temporary directory,
 * once per test worker (the files a worker runs share it), and the servers
 * serve that (DASHBOARD_DIR): the tests never run against a stale
 * packages/dashboard/dist, and never rewrite it. The directory goes when the
 * worker's process exits.
 */
let built: Promise<string> | undefined;
export function buildDashboard(): Promise<string> {
  built ??= (async () => {
    const outDir = await mkdtemp(path.join(os.tmpdir(), DASHBOARD_BUILD_PREFIX));
    exitOnSigterm();
    process.once('exit', () => rmSync(outDir, { recursive: true, force: true }));
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
    await writeFile(path.join(outDir, OWNER_FILE), owner());
    return outDir;
  })();
  // A failed build is tried again by the next file rather than failing it too.
  built.catch(() => (built = undefined));
  return built;
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

export type DashboardServer = Awaited<ReturnType<typeof startTestServer>>;

/**
 * A server serving this worker's dashboard build, and a page of the shared
 * Chromium signed up there as a new user (`<emailPrefix>-<time>@example.com`),
 * its console watched. `prepare` runs on the context before the page opens.
 */
export async function signedInDashboard(
  emailPrefix: string,
  watch: ConsoleWatch,
  prepare?: (context: BrowserContext) => Promise<unknown>,
  env: Record<string, string> = {},
): Promise<{ server: DashboardServer; context: BrowserContext; page: Page; sameOrigin: { origin: string } }> {
  const dashboard = await buildDashboard();
  await mkdir(screenshotDir, { recursive: true });
  const server = await startTestServer({ env: { ...env, DASHBOARD_DIR: dashboard } });
  const context = await (await sharedBrowser()).newContext({ viewport: DESKTOP, baseURL: server.url, acceptDownloads: true });
  await prepare?.(context);
  const page = await context.newPage();
  page.setDefaultTimeout(STEP_TIMEOUT);
  watch.attach(page);
  await page.goto('/signup');
  await page.getByLabel('Email').fill(`${emailPrefix}-${Date.now()}@example.com`);
  await page.getByLabel('Password').fill('correct horse battery');
  await page.getByRole('button', { name: 'Sign up' }).click();
  await page.waitForURL('**/buckets');
  return { server, context, page, sameOrigin: { origin: server.url } };
}

/**
 * Runs a step of a suite; on failure keeps a screenshot of the page as it was
 * (`failure-<name>.png`), then runs `after` either way; a step that passed
 * must have logged no console error.
 */
export async function runStep(page: Page, watch: ConsoleWatch, name: string, run: () => Promise<void>, after?: () => Promise<void>): Promise<void> {
  try {
    await run();
  } catch (error) {
    await page.screenshot({ path: path.join(screenshotDir, `failure-${name}.png`), fullPage: true }).catch(() => {});
    throw error;
  } finally {
    await after?.();
  }
  expect(watch.errors).toEqual([]);
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

/**
 * Resolves when the page sends a piece of a tus upload from `offset` on: the
 * server has acknowledged that many bytes. Set it up before the piece can go.
 */
export function pieceSent(page: Page, offset: number, timeout: number): Promise<unknown> {
  return page.waitForRequest((r) => r.method() === 'PATCH' && /\/uploads\//.test(r.url()) && Number(r.headers()['upload-offset']) >= offset, { timeout });
}

const BLOCK = 1024 * 1024;

/**
 * Random bytes from a seed, quick to make at any size: one random MiB (a
 * xorshift stream from the seed), each MiB of the result a copy of it stamped
 * with its index. No two MiB of a file are alike, so a piece stored at the
 * wrong offset, twice or not at all changes the file's hash.
 */
function* randomPieces(size: number, seed: number): Generator<Buffer> {
  const block = Buffer.alloc(Math.ceil(Math.min(size, BLOCK) / 4) * 4);
  const words = new Uint32Array(block.buffer, block.byteOffset, block.length / 4);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < words.length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    words[i] = x;
  }
  for (let at = 0, index = 0; at < size; at += BLOCK, index++) {
    if (block.length >= 4) block.writeUInt32LE(index, 0);
    yield block.subarray(0, Math.min(BLOCK, size - at));
  }
}

/** randomPieces as one buffer: for files small enough to hand a page as bytes. */
export function randomBytes(size: number, seed: number): Buffer {
  const bytes = Buffer.allocUnsafe(size);
  let at = 0;
  for (const piece of randomPieces(size, seed)) at += piece.copy(bytes, at);
  return bytes;
}

/**
 * Writes randomBytes(size, seed) to `file` a MiB at a time, and returns the
 * bytes' digest: a large file is never whole in memory, where touching
 * hundreds of fresh MiB is slow.
 */
export async function randomFile(file: string, size: number, seed: number, algorithm: 'md5' | 'sha256'): Promise<string> {
  const hash = createHash(algorithm);
  const handle = await open(file, 'w');
  try {
    for (const piece of randomPieces(size, seed)) {
      hash.update(piece);
      await handle.write(piece);
    }
  } finally {
    await handle.close();
  }
  return hash.digest('hex');
}

/**
 * A GET as the signed-in user of `context` makes it (its cookies), sent from
 * Node, its body hashed as it streams: a large body neither crosses the
 * browser protocol, as page.request's would, nor sits whole in memory.
 */
export async function downloadDigest(
  context: BrowserContext,
  url: string,
  algorithm: 'md5' | 'sha256',
): Promise<{ status: number; size: number; digest: string }> {
  const cookie = (await context.cookies(url)).map((c) => `${c.name}=${c.value}`).join('; ');
  const response = await fetch(url, { headers: { cookie } });
  const hash = createHash(algorithm);
  let size = 0;
  const reader = response.body?.getReader();
  for (let read = await reader?.read(); read && !read.done; read = await reader?.read()) {
    hash.update(read.value);
    size += read.value.length;
  }
  return { status: response.status, size, digest: hash.digest('hex') };
}
