/**
 * Unfinished uploads in the dashboard (issue 33, finding 11), end to end in
 * Chromium against a real server: a throttled large upload whose network is
 * cut three times and whose page is reloaded mid-upload goes on, from the
 * Usage page's list, to the right bytes; and an unfinished upload is listed
 * with the bytes it holds, shown beside the stored bytes, and cancelled, after
 * which the space is free again.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, CDPSession, Page, Request, Route } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer } from '../../server/test/helpers/server.js';
import {
  buildDashboard,
  ConsoleWatch,
  DESKTOP,
  downloadDigest,
  pieceSent,
  poll,
  randomFile,
  screenshotDir,
  sharedBrowser,
  skipBrowserSuites,
  STEP_TIMEOUT,
} from './e2e-helpers.js';

type TestServer = Awaited<ReturnType<typeof startTestServer>>;

const MiB = 1024 * 1024;
/**
 * The size, throttled to THROTTLE bytes per second up. The cuts and the
 * reload wait for the bytes the server has, not for time, so they land mid-upload
 * at any speed: the throttle need not make the upload slow.
 */
const SIZE = 200 * MiB;
const THROTTLE = 64 * MiB;
/** A crawl, for the moment of the reload: however long the reload takes, the upload is still going. */
const CRAWL = 256 * 1024;
const LONG = 240_000;

describe.skipIf(skipBrowserSuites)('dashboard unfinished uploads (end to end, Chromium)', () => {
  let server: TestServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let cdp: CDPSession;
  let tmp: string;
  const consoleWatch = new ConsoleWatch();
  let sameOrigin: { origin: string };
  /** Upload requests the page sent: method and Upload-Offset. */
  const sent: { method: string; offset: number | null }[] = [];
  const failed: string[] = [];

  const throttle = (bytesPerSecond: number, offline = false) =>
    cdp.send('Network.emulateNetworkConditions', { offline, latency: 0, downloadThroughput: -1, uploadThroughput: bytesPerSecond > 0 ? bytesPerSecond : -1 });

  const tray = (name: string) => page.getByRole('list', { name: 'Upload progress' }).getByRole('listitem', { name, exact: true });
  const pieceFrom = (offset: number) => pieceSent(page, offset, LONG);
  const me = async () => ((await (await page.request.get('/api/auth/me')).json()) as { data: { storage_used_bytes: number; storage_held_bytes: number } }).data;

  async function createBucket(name: string): Promise<number> {
    const res = await page.request.post('/api/buckets', { data: { name }, headers: sameOrigin });
    expect(res.status()).toBe(201);
    return ((await res.json()) as { data: { id: number } }).data.id;
  }

  beforeAll(async () => {
    const dashboard = await buildDashboard();
    await mkdir(screenshotDir, { recursive: true });
    tmp = await mkdtemp(path.join(os.tmpdir(), 'pail-unfinished-e2e-'));
    server = await startTestServer({ env: { DASHBOARD_DIR: dashboard, PLAN_FREE_STORAGE_BYTES: String(600 * MiB) } });
    sameOrigin = { origin: server.url };
    browser = await sharedBrowser();
    context = await browser.newContext({ viewport: DESKTOP, baseURL: server.url });
    page = await context.newPage();
    page.setDefaultTimeout(STEP_TIMEOUT);
    consoleWatch.attach(page);
    // One session for the page's life: it stays attached across the reload, and so does its throttling.
    cdp = await context.newCDPSession(page);
    await cdp.send('Network.enable');
    page.on('request', (request: Request) => {
      if (!/\/api\/buckets\/\d+\/uploads/.test(new URL(request.url()).pathname) || request.method() === 'HEAD') return;
      const offset = request.headers()['upload-offset'];
      sent.push({ method: request.method(), offset: offset === undefined ? null : Number(offset) });
    });
    page.on('requestfailed', (request: Request) => {
      if (/\/uploads\//.test(request.url())) failed.push(`${request.method()} ${request.failure()?.errorText ?? ''}`);
    });
    page.on('dialog', (dialog) => void dialog.accept());

    await page.goto('/signup');
    await page.getByLabel('Email').fill(`unfinished-${Date.now()}@example.com`);
    await page.getByLabel('Password').fill('correct horse battery');
    await page.getByRole('button', { name: 'Sign up' }).click();
    await page.waitForURL('**/buckets');
  }, 120_000);

  afterAll(async () => {
    await context?.close();
    await server?.close();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  async function step(name: string, run: () => Promise<void>): Promise<void> {
    try {
      await run();
    } catch (error) {
      await page.screenshot({ path: path.join(screenshotDir, `failure-unfinished-${name}.png`), fullPage: true }).catch(() => {});
      throw error;
    }
    expect(consoleWatch.errors).toEqual([]);
  }

  it(
    'a throttled 200 MB upload rides out three network cuts and a reload, goes on from the Usage page, and lands with the right bytes',
    () =>
      step('cuts', async () => {
        const bucketId = await createBucket('cuts');
        const file = path.join(tmp, 'film.mov');
        const sha256 = await randomFile(file, SIZE, 7, 'sha256');

        await page.goto(`/buckets/${bucketId}`);
        await page.locator('.dropzone').waitFor();
        await throttle(THROTTLE);
        const failedBefore = failed.length;
        // Three cuts once the server has 8%, 20% and 32% of the bytes, then the reload at 45%.
        const [first, ...later] = [0.08, 0.2, 0.32, 0.45].map((share) => Math.round(SIZE * share));
        let next = pieceFrom(first!);
        await page.getByLabel('Choose files to upload').setInputFiles(file);

        await consoleWatch.allowing([/ERR_INTERNET_DISCONNECTED/, /ERR_CONNECTION_RESET/, /Failed to load resource/], async () => {
          // Three cuts while bytes are on the way: each fails what is in flight, then the network comes back.
          for (const at of later) {
            await next;
            const failedAtCut = failed.length;
            await throttle(THROTTLE, true);
            await tray('film.mov')
              .getByText(/^Connection lost · trying again/)
              .waitFor();
            // The cut lasts until a try made during it has failed too: the piece on the way, then the next attempt.
            await poll(() => failed.length).toBeGreaterThanOrEqual(failedAtCut + 2);
            next = pieceFrom(at);
            await throttle(THROTTLE);
          }
          await next;

          // A reload mid-upload: the page loses the File; the server keeps the upload and lists it.
          await throttle(CRAWL);
          await page.reload();
          await page.goto('/usage');
          // The top bar shows the upload's length held beside what is stored.
          await poll(() => page.getByTestId('storage-held').textContent()).toBe('+200 MiB held');
          const row = page.getByRole('table', { name: 'Unfinished uploads' }).getByRole('row', { name: 'film.mov' });
          await row.getByRole('cell', { name: '200 MiB', exact: true }).waitFor();
          await row.getByText(/MiB of 200 MiB received/).waitFor();
          await page.screenshot({ path: path.join(screenshotDir, 'usage-unfinished-desktop.png'), animations: 'disabled' });
          const resumedFrom = sent.length;
          await throttle(THROTTLE);
          await page.getByLabel('Choose film.mov again to go on').setInputFiles(file);
          await page.getByRole('heading', { name: 'Uploads (1 of 1 done)' }).waitFor({ timeout: LONG });
          // Gone on with the same upload, from the server's offset: no new upload was created.
          const after = sent.slice(resumedFrom);
          expect(after.filter((r) => r.method === 'POST')).toEqual([]);
          expect(after.find((r) => r.method === 'PATCH')?.offset).toBeGreaterThan(0);
        });
        await throttle(0);
        expect(failed.length - failedBefore).toBeGreaterThan(0);

        const downloaded = await downloadDigest(context, `${server.url}/api/buckets/${bucketId}/files/film.mov`, 'sha256');
        expect(downloaded.size).toBe(SIZE);
        expect(downloaded.digest).toBe(sha256);
        await poll(async () => (await me()).storage_held_bytes).toBe(0);
        expect((await me()).storage_used_bytes).toBe(SIZE);
        await page.getByRole('table', { name: 'Unfinished uploads' }).waitFor({ state: 'detached' });
        await rm(file);
        await page.getByRole('button', { name: 'Clear finished' }).click();
      }),
    LONG * 2,
  );

  it(
    'goes on after the server answers that the upload moved on (409 OffsetMismatch), rather than ending it with no Retry',
    () =>
      step('conflict', async () => {
        const bucketId = await createBucket('conflict');
        // A piece and a bit. Bytes that cross a route do so slowly: the first piece is on its way before the route is set up.
        const file = path.join(tmp, 'moved.bin');
        const sha256 = await randomFile(file, 9 * MiB, 9, 'sha256');
        await page.goto(`/buckets/${bucketId}`);
        await page.locator('.dropzone').waitFor();
        // The answer a PATCH gets when a cut request beside it moved the upload on: once, for the second piece.
        let refused = 0;
        const refuseSecondPiece = async (route: Route) => {
          const offset = Number(route.request().headers()['upload-offset'] ?? 0);
          if (route.request().method() !== 'PATCH' || offset === 0 || refused > 0) return route.continue();
          refused += 1;
          await route.fulfill({
            status: 409,
            contentType: 'application/json',
            body: JSON.stringify({ error: 'The upload moved on meanwhile (another request) or ended', code: 'OffsetMismatch' }),
          });
        };
        // The upload crawls until the route is set up, so the second piece cannot start before it.
        await throttle(CRAWL);
        const firstPiece = pieceFrom(0);
        try {
          await consoleWatch.allowing([/status of 409/], async () => {
            await page.getByLabel('Choose files to upload').setInputFiles(file);
            await firstPiece;
            await page.route(/\/api\/buckets\/\d+\/uploads\/[0-9a-f]+$/, refuseSecondPiece);
            await throttle(0);
            await page.getByRole('heading', { name: 'Uploads (1 of 1 done)' }).waitFor({ timeout: LONG });
          });
        } finally {
          await throttle(0);
          await page.unroute(/\/api\/buckets\/\d+\/uploads\/[0-9a-f]+$/);
        }
        expect(refused).toBe(1);
        expect((await downloadDigest(context, `${server.url}/api/buckets/${bucketId}/files/moved.bin`, 'sha256')).digest).toBe(sha256);
        await page.getByRole('button', { name: 'Clear finished' }).click();
      }),
    LONG,
  );

  it(
    'keeps trying after a network cut longer than every retry, and finishes once the network is back',
    () =>
      step('outage', async () => {
        const bucketId = await createBucket('outage');
        // A piece and a bit. Bytes that cross a route do so slowly: the first piece is on its way before the route is set up.
        const file = path.join(tmp, 'long.bin');
        const sha256 = await randomFile(file, 9 * MiB, 11, 'sha256');
        // A page of its own whose timers the test runs: tus's retries span two minutes.
        const clocked = await context.newPage();
        clocked.setDefaultTimeout(STEP_TIMEOUT);
        const watch = new ConsoleWatch();
        watch.attach(clocked);
        try {
          await clocked.clock.install();
          await clocked.goto(`/buckets/${bucketId}`);
          await clocked.locator('.dropzone').waitFor();
          const uploads = /\/api\/buckets\/\d+\/uploads\/[0-9a-f]+$/;
          let cut = true;
          let cutRequests = 0;
          // Every piece after the first fails as on a dead network, until the network is back.
          const cutAfterFirstPiece = async (route: Route) => {
            const offset = Number(route.request().headers()['upload-offset'] ?? 0);
            if (!cut || (route.request().method() === 'PATCH' && offset === 0)) return route.continue();
            cutRequests += 1;
            await route.abort('internetdisconnected');
          };
          // The upload crawls until the route is set up, so the second piece cannot start before it.
          const clockedCdp = await context.newCDPSession(clocked);
          await clockedCdp.send('Network.enable');
          const throttleClocked = (bytesPerSecond: number) =>
            clockedCdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: bytesPerSecond });
          await throttleClocked(CRAWL);
          const firstPiece = pieceSent(clocked, 0, LONG);
          await watch.allowing([/ERR_INTERNET_DISCONNECTED/], async () => {
            await clocked.getByLabel('Choose files to upload').setInputFiles(file);
            await firstPiece;
            await clocked.route(uploads, cutAfterFirstPiece);
            await throttleClocked(-1);
            const item = clocked.getByRole('list', { name: 'Upload progress' }).getByRole('listitem', { name: 'long.bin', exact: true });
            await item.getByText(/^Connection lost · trying again/).waitFor();
            // Five minutes of an outage: tus's own retries (about two minutes) are all spent.
            for (let minute = 0; minute < 10; minute++) {
              const before = cutRequests;
              await clocked.clock.runFor(30_000);
              // A retry the clock made due goes out in the page's own time: up to 2 s for it on a loaded host.
              for (const until = Date.now() + 2_000; cutRequests === before && Date.now() < until;) {
                await new Promise((resolve) => setTimeout(resolve, 50));
              }
            }
            expect(cutRequests).toBeGreaterThan(8);
            expect(await item.getAttribute('data-status')).not.toBe('error');
            await item.getByText(/^Connection lost · trying again/).waitFor();
            cut = false;
            await clocked.clock.runFor(31_000);
            await clocked.getByRole('heading', { name: /^Uploads \(\d+ of \d+ done\)$/ }).waitFor({ timeout: LONG });
            // All landed, the tray folded to its summary: open it to see the item.
            await clocked.getByRole('button', { name: 'Show uploads' }).click();
            await item.and(clocked.locator('[data-status="done"]')).waitFor({ timeout: LONG });
          });
          expect((await downloadDigest(context, `${server.url}/api/buckets/${bucketId}/files/long.bin`, 'sha256')).digest).toBe(sha256);
          expect(watch.errors).toEqual([]);
        } finally {
          await clocked.close();
        }
      }),
    LONG,
  );

  it(
    'lists an unfinished upload with the bytes it holds, and cancelling it frees them',
    () =>
      step('cancel', async () => {
        const bucketId = await createBucket('abandoned');
        // An upload some tool began and left: 30 MiB declared, 1 MiB sent.
        const created = await page.request.post(`/api/buckets/${bucketId}/uploads`, {
          headers: { ...sameOrigin, 'tus-resumable': '1.0.0', 'upload-length': String(30 * MiB), 'upload-metadata': `filename ${btoa('disk.iso')}` },
        });
        expect(created.status()).toBe(201);
        const patched = await page.request.patch(created.headers().location!, {
          headers: { ...sameOrigin, 'tus-resumable': '1.0.0', 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' },
          data: Buffer.alloc(MiB, 1),
        });
        expect(patched.status()).toBe(204);
        const usedBefore = (await me()).storage_used_bytes;

        await page.goto('/usage');
        await poll(() => page.getByTestId('storage-held').textContent()).toBe('+30 MiB held');
        await poll(() => page.getByTestId('storage-note').textContent()).toContain('30 MiB held by unfinished uploads');
        const row = page.getByRole('table', { name: 'Unfinished uploads' }).getByRole('row', { name: 'disk.iso' });
        await row.getByRole('cell', { name: '30 MiB', exact: true }).waitFor();
        await row.getByText('1 MiB of 30 MiB received').waitFor();

        await row.getByRole('button', { name: 'Cancel upload of disk.iso' }).click();
        const dialog = page.getByRole('dialog', { name: 'Cancel upload?' });
        await dialog.getByText('the 30 MiB it holds are free again').waitFor();
        await dialog.getByRole('button', { name: 'Cancel upload' }).click();
        await row.waitFor({ state: 'detached' });
        await page.getByText('None: nothing holds storage but your files.').waitFor();
        await page.getByTestId('storage-held').waitFor({ state: 'detached' });
        expect(await me()).toMatchObject({ storage_held_bytes: 0, storage_used_bytes: usedBefore });
        expect((await page.request.head(created.headers().location!, { headers: { 'tus-resumable': '1.0.0' } })).status()).toBe(404);
      }),
    LONG,
  );
});
