/**
 * The dashboard as a file manager (issue 36), end to end in Chromium against
 * a real server: PDFs, video and audio previewed by the browser itself
 * (seeking by ranges) under the page's Content-Security-Policy; folders
 * uploaded with their tree, by the folder picker and by a drop (200 files in
 * 3 levels, read through the entries API); folders first and names in
 * natural order; "New folder" opening the folder it made; bucket names and
 * passwords saying one thing at a time; the quick start showing only what
 * its key may do; and the layout at desktop and phone sizes, measured with
 * element boxes (the upload tray beside the names, one-line headers, a
 * dialog's Download in view). What landed is checked through the API.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConsoleWatch, DESKTOP, PHONE, poll, runStep, signedInDashboard, skipBrowserSuites, type DashboardServer } from './e2e-helpers.js';

type TestServer = DashboardServer;
type Box = { x: number; y: number; width: number; height: number };

const here = path.dirname(fileURLToPath(import.meta.url));
/** Four seconds of a 64×48 H.264 video, recorded by Chromium's MediaRecorder from a canvas (5.7 KB). */
const MP4 = path.join(here, 'fixtures/clip.mp4');
/** Where the pages are photographed in light and dark, at both sizes (not committed). */
const galleryDir = path.resolve(here, '../../../test-artifacts/screenshots/file-manager');

/** A one-page PDF that says "Hello PDF". */
const PDF = Buffer.from(
  [
    '%PDF-1.4',
    '1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj',
    '2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj',
    '3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 300 144]/Contents 4 0 R/Resources<</Font<</F1 5 0 R>>>>>>endobj',
    '4 0 obj<</Length 44>>stream',
    'BT /F1 24 Tf 20 60 Td (Hello PDF) Tj ET',
    'endstream endobj',
    '5 0 obj<</Type/Font/Subtype/Type1/BaseFont/Helvetica>>endobj',
    'trailer<</Root 1 0 R>>',
    '%%EOF',
    '',
  ].join('\n'),
);

/**
 * About 2.6 s of silence as MPEG-1 Layer III: 100 frames at 128 kbit/s,
 * 44.1 kHz, mono, each a header and zeros (no side information, no main
 * data: a decoder plays them as silence).
 */
function silentMp3(frames = 100): Buffer {
  const frame = Buffer.alloc(417);
  frame.set([0xff, 0xfb, 0x90, 0xc4]);
  return Buffer.concat(Array.from({ length: frames }, () => frame));
}

const overlaps = (a: Box, b: Box) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

async function box(locator: Locator): Promise<Box> {
  const found = await locator.boundingBox();
  expect(found, 'the element has a box').not.toBeNull();
  return found!;
}

interface Listed {
  data: { filename: string; size: number }[];
  next_cursor: string | null;
}

describe.skipIf(skipBrowserSuites)('dashboard as a file manager (end to end, Chromium)', () => {
  let server: TestServer;
  let context: BrowserContext;
  let page: Page;
  let tmp: string;
  const consoleWatch = new ConsoleWatch();
  let sameOrigin: { origin: string };

  const api = {
    async createBucket(name: string, limits: Record<string, unknown> = {}): Promise<number> {
      const res = await page.request.post('/api/buckets', { data: { name, ...limits }, headers: sameOrigin });
      expect(res.status()).toBe(201);
      return ((await res.json()) as { data: { id: number } }).data.id;
    },
    async put(bucketId: number, filename: string, body: string | Buffer, type = 'text/plain'): Promise<void> {
      const encoded = filename.split('/').map(encodeURIComponent).join('/');
      const res = await page.request.put(`/api/buckets/${bucketId}/files/${encoded}`, { data: body, headers: { ...sameOrigin, 'content-type': type } });
      expect(res.status(), filename).toBe(201);
    },
    /** Every name under `prefix`, page after page. */
    async names(bucketId: number, prefix = ''): Promise<string[]> {
      const names: string[] = [];
      let cursor: string | null = null;
      do {
        const query = new URLSearchParams({ prefix, limit: '1000', ...(cursor ? { cursor } : {}) });
        const res = await page.request.get(`/api/buckets/${bucketId}/files?${query.toString()}`);
        const body = (await res.json()) as Listed;
        names.push(...body.data.map((f) => f.filename));
        cursor = body.next_cursor;
      } while (cursor);
      return names;
    },
    async text(bucketId: number, filename: string): Promise<string> {
      return (await page.request.get(`/api/buckets/${bucketId}/files/${encodeURIComponent(filename)}`)).text();
    },
  };

  const openBucket = async (bucketId: number, query = '') => {
    await page.goto(`/buckets/${bucketId}${query}`);
    await page.locator('.dropzone').waitFor();
  };
  const trayHeading = () => page.locator('#upload-tray-title');

  beforeAll(async () => {
    await mkdir(galleryDir, { recursive: true });
    tmp = await mkdtemp(path.join(os.tmpdir(), 'pail-file-manager-e2e-'));
    // Every violation of the page's Content-Security-Policy, as the page hears of it.
    const watchCsp = (context: BrowserContext) =>
      context.addInitScript(() => {
        const seen: string[] = [];
        (window as unknown as { cspViolations: string[] }).cspViolations = seen;
        document.addEventListener('securitypolicyviolation', (event) => seen.push(`${event.violatedDirective} ${event.blockedURI}`));
      });
    ({ server, context, page, sameOrigin } = await signedInDashboard('files', consoleWatch, watchCsp));
  }, 120_000);

  afterAll(async () => {
    await context?.close();
    await server?.close();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  /** Runs a step; on failure keeps a screenshot of the page as it was; back to the desktop size after. */
  const step = (name: string, run: () => Promise<void>) => runStep(page, consoleWatch, name, run, () => page.setViewportSize(DESKTOP));

  const cspViolations = () => page.evaluate(() => (window as unknown as { cspViolations: string[] }).cspViolations);

  it('previews a PDF in the browser viewer, and plays an MP4 and an MP3 that seek by ranges', () =>
    step('media', async () => {
      // The policy stays strict: no plugins, frames and media from this origin only.
      const html = await page.request.get('/buckets', { headers: { accept: 'text/html' } });
      const csp = html.headers()['content-security-policy'] ?? '';
      expect(csp).toContain("object-src 'none'");
      expect(csp).toContain("frame-src 'self'");
      expect(csp).toContain("media-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");

      const bucketId = await api.createBucket('media');
      await api.put(bucketId, 'doc.pdf', PDF, 'application/pdf');
      await api.put(bucketId, 'clip.mp4', await readFile(MP4), 'video/mp4');
      await api.put(bucketId, 'tone.mp3', silentMp3(), 'audio/mpeg');
      const ranges: string[] = [];
      page.on('request', (request) => {
        const range = request.headers()['range'];
        if (range && /\/files\//.test(request.url())) ranges.push(`${decodeURIComponent(new URL(request.url()).pathname.split('/').pop()!)} ${range}`);
      });
      await openBucket(bucketId);

      // PDF: the browser's own viewer, in a frame of the file's URL.
      expect(await page.evaluate(() => navigator.pdfViewerEnabled)).toBe(true);
      await page.getByRole('button', { name: 'Preview doc.pdf' }).click();
      const pdfDialog = page.getByRole('dialog', { name: 'doc.pdf' });
      const frame = pdfDialog.locator('iframe[title="Preview of doc.pdf"]');
      expect(await frame.getAttribute('src')).toBe(`/api/buckets/${bucketId}/files/doc.pdf`);
      // The viewer is the browser's PDF extension, loaded inside that frame.
      await poll(() => page.frames().some((f) => f.url().startsWith('chrome-extension://') && f.parentFrame()?.url().endsWith('/doc.pdf'))).toBe(true);
      expect(await pdfDialog.getByText(/browser/).count()).toBe(0);
      const frameBox = await box(frame);
      expect(frameBox.height).toBeGreaterThan(200);
      // Download is in the dialog's footer, in view at 800 px high and on a phone.
      for (const size of [DESKTOP, PHONE]) {
        await page.setViewportSize(size);
        const download = await box(pdfDialog.getByRole('link', { name: 'Download' }));
        expect(download.y + download.height, `${size.width}×${size.height}`).toBeLessThanOrEqual(size.height);
        expect(download.y).toBeGreaterThan(0);
      }
      await page.setViewportSize(DESKTOP);
      await page.screenshot({ path: path.join(galleryDir, 'preview-pdf-desktop-light.png') });
      await pdfDialog.getByRole('button', { name: 'Close dialog' }).click();

      // Video and audio: the browser's players against the file's URL, which answers ranges.
      for (const [name, tag, to] of [
        ['clip.mp4', 'video', 2],
        ['tone.mp3', 'audio', 1.5],
      ] as const) {
        await page.getByRole('button', { name: `Preview ${name}` }).click();
        const dialog = page.getByRole('dialog', { name });
        const player = dialog.locator(`${tag}[aria-label="Preview of ${name}"]`);
        expect(await player.getAttribute('controls')).not.toBeNull();
        expect(await player.getAttribute('src')).toBe(`/api/buckets/${bucketId}/files/${encodeURIComponent(name)}`);
        await poll(() => player.evaluate((el: HTMLMediaElement) => el.readyState)).toBeGreaterThanOrEqual(1);
        const duration = await player.evaluate((el: HTMLMediaElement) => el.duration);
        expect(duration, name).toBeGreaterThan(to);
        const seeked = await player.evaluate(
          (el: HTMLMediaElement, at: number) =>
            new Promise<number>((resolve, reject) => {
              el.addEventListener('seeked', () => resolve(el.currentTime), { once: true });
              el.addEventListener('error', () => reject(new Error(el.error?.message ?? 'media error')), { once: true });
              el.currentTime = at;
            }),
          to,
        );
        expect(Math.abs(seeked - to), name).toBeLessThan(0.6);
        await poll(() => ranges.some((r) => r.startsWith(`${name} bytes=`))).toBe(true);
        expect(await dialog.getByText(/cannot play/).count()).toBe(0);
        await page.screenshot({ path: path.join(galleryDir, `preview-${tag}-desktop-light.png`) });
        await dialog.getByRole('button', { name: 'Close dialog' }).click();
      }
      expect(await cspViolations()).toEqual([]);
    }));

  it('uploads a folder with its tree: by the folder picker, and by a drop of 200 files in 3 levels', () =>
    step('folders', async () => {
      const bucketId = await api.createBucket('trees', { max_file_bytes: 1000 });
      await api.put(bucketId, 'inbox/', '');
      await openBucket(bucketId, `?folder=${encodeURIComponent('inbox/')}`);

      // The picker: a directory on disk, its files named by their path in it; one over the bucket's limit is refused unsent.
      const trip = path.join(tmp, 'trip');
      await mkdir(path.join(trip, 'day1/raw'), { recursive: true });
      await writeFile(path.join(trip, 'a.txt'), 'top');
      await writeFile(path.join(trip, 'day1/b.txt'), 'middle');
      await writeFile(path.join(trip, 'day1/raw/c.txt'), 'bottom');
      await writeFile(path.join(trip, 'day1/raw/big.bin'), Buffer.alloc(2000, 1));
      const sent: string[] = [];
      page.on('request', (request) => {
        if (request.method() === 'PUT' || request.method() === 'POST') sent.push(decodeURIComponent(new URL(request.url()).pathname));
      });
      await page.getByLabel('Choose a folder to upload').setInputFiles(trip);
      await page.getByRole('listitem', { name: 'inbox/trip/day1/raw/big.bin' }).getByText('File too large').waitFor();
      await trayHeading().getByText('(3 of 4 done)').waitFor();
      expect((await api.names(bucketId, 'inbox/trip/')).sort()).toEqual(['inbox/trip/a.txt', 'inbox/trip/day1/b.txt', 'inbox/trip/day1/raw/c.txt']);
      expect(await api.text(bucketId, 'inbox/trip/day1/raw/c.txt')).toBe('bottom');
      expect(sent.some((url) => url.includes('big.bin'))).toBe(false);
      // The folder shows in the list it landed in.
      await page.getByRole('link', { name: 'Open folder trip' }).waitFor();
      await page.getByRole('button', { name: 'Clear finished' }).click();

      // The drop: entries as the browser gives them for a dropped folder (readEntries answers 100 at a time, then
      // an empty batch), through the page's real drop handler, with a loose file beside the folder.
      const dropTree = (tree: Record<string, string>, loose: string[]) =>
        page.evaluate(
          ({ tree, loose }) => {
            type Node = { files: Map<string, string>; dirs: Map<string, Node> };
            const root: Node = { files: new Map(), dirs: new Map() };
            for (const [filePath, text] of Object.entries(tree)) {
              const parts = filePath.split('/');
              let node = root;
              for (const dir of parts.slice(0, -1)) {
                if (!node.dirs.has(dir)) node.dirs.set(dir, { files: new Map(), dirs: new Map() });
                node = node.dirs.get(dir)!;
              }
              node.files.set(parts[parts.length - 1]!, text);
            }
            const fileEntry = (name: string, text: string) => ({
              isFile: true,
              isDirectory: false,
              name,
              file: (resolve: (file: File) => void) => setTimeout(() => resolve(new File([text], name, { type: 'text/plain' }))),
            });
            const dirEntry = (name: string, node: Node): unknown => ({
              isFile: false,
              isDirectory: true,
              name,
              createReader: () => {
                const children = [
                  ...[...node.dirs].map(([dir, child]) => dirEntry(dir, child)),
                  ...[...node.files].map(([file, text]) => fileEntry(file, text)),
                ];
                let at = 0;
                return {
                  readEntries: (resolve: (batch: unknown[]) => void) =>
                    setTimeout(() => {
                      resolve(children.slice(at, at + 100));
                      at += 100;
                    }),
                };
              },
            });
            const entries = [...[...root.dirs].map(([dir, node]) => dirEntry(dir, node)), ...loose.map((name) => fileEntry(name, `loose ${name}`))];
            const files = loose.map((name) => new File([`loose ${name}`], name, { type: 'text/plain' }));
            const dataTransfer = {
              types: ['Files'],
              files,
              items: entries.map((entry) => ({ kind: 'file', type: '', webkitGetAsEntry: () => entry, getAsFile: () => null })),
              dropEffect: 'copy',
            };
            const zone = document.querySelector('.dropzone')!;
            for (const type of ['dragenter', 'dragover', 'drop']) {
              const event = new Event(type, { bubbles: true, cancelable: true });
              Object.defineProperty(event, 'dataTransfer', { value: dataTransfer });
              zone.dispatchEvent(event);
            }
          },
          { tree, loose },
        );

      const tree: Record<string, string> = {};
      for (let i = 0; i < 20; i++) tree[`album/cover-${i}.txt`] = `cover ${i}`;
      for (let i = 0; i < 120; i++) tree[`album/2025/photo-${i}.txt`] = `photo ${i}`;
      for (let i = 0; i < 60; i++) tree[`album/2025/raw/raw-${i}.txt`] = `raw ${i}`;
      await openBucket(bucketId);
      await dropTree(tree, ['notes.txt']);
      await trayHeading().getByText('(201 of 201 done)').waitFor({ timeout: 120_000 });
      const landed = await api.names(bucketId, 'album/');
      expect(landed.sort()).toEqual(Object.keys(tree).sort());
      expect(await api.text(bucketId, 'album/2025/raw/raw-59.txt')).toBe('raw 59');
      expect(await api.text(bucketId, 'notes.txt')).toBe('loose notes.txt');
      await page.getByRole('link', { name: 'Open folder album' }).waitFor();

      // The same tree again, in part: the question before replacing, for a file deep inside it; Keep both.
      await dropTree({ 'album/2025/raw/raw-0.txt': 'raw again', 'album/2025/raw/new.txt': 'new' }, []);
      const ask = page.getByRole('dialog', { name: 'Replace file?' });
      await ask.getByText('album/2025/raw/raw-0.txt').waitFor();
      await ask.getByRole('button', { name: 'Keep both' }).click();
      await poll(async () => (await api.names(bucketId, 'album/2025/raw/')).length).toBe(62);
      expect(await api.text(bucketId, 'album/2025/raw/raw-0 (1).txt')).toBe('raw again');
      expect(await api.text(bucketId, 'album/2025/raw/raw-0.txt')).toBe('raw 0');
    }));

  it('lists folders first and names in natural order, ignoring case, across pages', () =>
    step('sort', async () => {
      const bucketId = await api.createBucket('natural');
      const names = [
        ...Array.from({ length: 24 }, (_, i) => `file${i + 1}.txt`),
        ...Array.from({ length: 15 }, (_, i) => `Report-${i + 1}.pdf`),
        ...Array.from({ length: 15 }, (_, i) => `data-${i + 1}.csv`),
      ];
      for (const name of names) await api.put(bucketId, name, 'x');
      for (const folder of ['Zeta/', 'alpha/', 'Beta/']) await api.put(bucketId, `${folder}inside.txt`, 'x');
      await openBucket(bucketId);
      const folderRows = () => page.locator('table.file-table tbody tr.folder-row th.cell-name span').allTextContents();
      const fileRows = () => page.locator('table.file-table tbody tr:not(.folder-row) th.cell-name span').allTextContents();
      await poll(folderRows).toEqual(['alpha/', 'Beta/', 'Zeta/']);
      // 3 folders, then 47 files: data-* and Report-* by letter whatever their case, file2 before file10.
      const first = await fileRows();
      expect(first).toEqual([
        ...Array.from({ length: 15 }, (_, i) => `data-${i + 1}.csv`),
        ...Array.from({ length: 24 }, (_, i) => `file${i + 1}.txt`),
        ...Array.from({ length: 8 }, (_, i) => `Report-${i + 1}.pdf`),
      ]);
      await page.getByRole('button', { name: 'Next' }).click();
      await poll(fileRows).toEqual(Array.from({ length: 7 }, (_, i) => `Report-${i + 9}.pdf`));
      expect(await folderRows()).toEqual([]);
    }));

  it('opens the folder "New folder" made, so the next upload lands in it', () =>
    step('new-folder', async () => {
      const bucketId = await api.createBucket('made');
      await openBucket(bucketId);
      await page.getByRole('button', { name: 'New folder' }).click();
      const dialog = page.getByRole('dialog', { name: 'New folder' });
      await dialog.getByLabel('Folder name').fill('invoices');
      await dialog.getByRole('button', { name: 'Create folder' }).click();
      await page.waitForURL((url) => url.searchParams.get('folder') === 'invoices/');
      await page.getByRole('navigation', { name: 'Folder path' }).getByText('invoices').waitFor();
      await page.getByLabel('Choose files to upload').setInputFiles([{ name: 'march.txt', mimeType: 'text/plain', buffer: Buffer.from('paid') }]);
      await poll(() => api.names(bucketId)).toEqual(['invoices/', 'invoices/march.txt']);
      await page.getByRole('button', { name: 'Preview march.txt' }).waitFor();
    }));

  it('says one thing at a time about bucket names and passwords', () =>
    step('names', async () => {
      await api.createBucket('taken');
      await page.goto('/buckets');
      await page.getByRole('button', { name: 'New bucket' }).first().click();
      const dialog = page.getByRole('dialog', { name: 'Create a bucket' });
      await dialog.getByLabel('Bucket name').fill('My Bucket!');
      await dialog
        .getByText('Bucket name may contain only lowercase letters, digits, hyphens and underscores: it has uppercase letters (M, B), a space and “!”')
        .waitFor();
      // The error takes the hint's place.
      expect(await dialog.getByText('3–40 characters').count()).toBe(0);
      await dialog.getByLabel('Bucket name').fill('taken');
      await dialog.getByText('“taken” is a valid name.').waitFor();
      await consoleWatch.allowing([/409 \(Conflict\)/], async () => {
        await dialog.getByRole('button', { name: 'Create bucket' }).click();
        await dialog.getByText('You already have a bucket named “taken”. Pick another name.').waitFor();
      });
      expect(await dialog.getByText('is a valid name').count()).toBe(0);
      await dialog.getByLabel('Bucket name').fill('taken-2');
      await dialog.getByText('“taken-2” is a valid name.').waitFor();
      expect(await dialog.getByText('already have a bucket').count()).toBe(0);
      await dialog.getByRole('button', { name: 'Cancel' }).click();

      const visitor = await context.browser()!.newContext({ viewport: DESKTOP, baseURL: server.url });
      try {
        const signup = await visitor.newPage();
        await signup.goto('/signup');
        await signup.getByText('At least 8 characters.', { exact: true }).waitFor();
        await signup.getByLabel('Email').fill('short@example.com');
        await signup.getByLabel('Password').fill('short');
        await signup.getByRole('button', { name: 'Sign up' }).click();
        await signup.getByText('Use at least 8 characters.').waitFor();
        expect(await signup.getByText('At least 8 characters.', { exact: true }).count()).toBe(0);
      } finally {
        await visitor.close();
      }
    }));

  it('fills the quick start with examples the new key can run, and says when it can only read', () =>
    step('quick-start', async () => {
      const bucketId = await api.createBucket('quick');
      await page.goto('/sdk');
      const form = page.getByRole('form', { name: 'Create an API key' });
      await form.getByLabel('Key name').fill('reader');
      for (const permission of ['write', 'delete', 'manage']) await form.getByRole('checkbox', { name: permission, exact: true }).uncheck();
      await form.getByRole('button', { name: 'Create API key' }).click();
      const key = (await page.getByTestId('new-api-key').textContent())!.trim();
      const note = page.getByTestId('key-scope-note');
      await note.getByText('can read but not upload').waitFor();
      await page.getByLabel('Bucket for the examples').selectOption(String(bucketId));
      const curl = (await page.locator('.code-block pre').first().textContent()) ?? '';
      expect(curl).toContain(key);
      expect(curl).not.toContain('-X PUT');
      expect(curl).toContain(`/api/v1/buckets/${bucketId}/files`);
      // What the example lists answers 200 with that key.
      const listed = await fetch(`${server.url}/api/v1/buckets/${bucketId}/files`, { headers: { 'x-api-key': key } });
      expect(listed.status).toBe(200);
      await note.getByRole('button', { name: 'Create a key with the write permission' }).click();
      await poll(() => page.evaluate(() => document.activeElement?.getAttribute('name'))).toBe('key-name');
    }));

  it('keeps the bucket page in shape at desktop and phone sizes: actions on one row, names readable, one visibility control', () =>
    step('layout', async () => {
      const longName = 'quarterly-reports-and-archives-2026-final';
      const bucketId = await api.createBucket(longName.slice(0, 40));
      const longFile = 'a-very-long-file-name-that-a-phone-would-cut-short-2026-final-v2.txt';
      await api.put(bucketId, longFile, 'x');
      await openBucket(bucketId);
      const actions = page.locator('.page-actions > *');
      // Each shown action's middle, in pixels from the top: one row has one middle.
      const tops = () =>
        actions.evaluateAll((els) =>
          els
            .map((el) => el.getBoundingClientRect())
            .filter((rect) => rect.width > 0)
            .map((rect) => Math.round(rect.top + rect.height / 2)),
        );
      const before = await tops();
      expect(new Set(before).size, 'the actions share one row').toBe(1);
      // The subtitle grows (more files, more bytes): the actions stay where they were.
      for (let i = 0; i < 12; i++) await api.put(bucketId, `more-${i}.bin`, 'y'.repeat(150_000), 'application/octet-stream');
      await page.reload();
      await page.getByTestId('bucket-object-count').getByText('13 objects').waitFor();
      expect(await tops()).toEqual(before);

      // One control for visibility: the switch says what it controls; the badge says what the bucket is.
      const visibility = page.getByRole('switch', { name: `Public access for ${longName.slice(0, 40)}` });
      expect((await visibility.textContent())?.trim()).toBe('Public access');
      await page.locator('.page-title .badge').getByText('Private').waitFor();

      // On a phone a long name wraps, whole.
      await page.setViewportSize(PHONE);
      const name = page.getByRole('button', { name: `Preview ${longFile}` }).locator('span');
      expect(await name.textContent()).toBe(longFile);
      const fits = await name.evaluate((el) => el.scrollWidth <= el.clientWidth + 1);
      expect(fits, 'the whole name is shown').toBe(true);
    }));

  it('keeps the upload tray beside the names, one line high at its head, folded when all landed, its bars at their labels', () =>
    step('tray', async () => {
      const bucketId = await api.createBucket('tray', { max_file_bytes: 50_000 });
      for (let i = 0; i < 12; i++) await api.put(bucketId, `existing-${i}.txt`, 'x');
      await openBucket(bucketId);
      const nameHeader = page.locator('table.file-table thead th', { hasText: 'Name' });
      await page.getByLabel('Choose files to upload').setInputFiles([
        { name: 'fine.txt', mimeType: 'text/plain', buffer: Buffer.from('fine') },
        { name: 'too-big.bin', mimeType: 'application/octet-stream', buffer: Buffer.alloc(60_000) },
      ]);
      await trayHeading().getByText('(1 of 2 done)').waitFor();
      const tray = page.locator('.upload-tray');
      await page.locator('.upload-tray-failed').getByText('1 failed').waitFor();
      for (const size of [DESKTOP, PHONE]) {
        await page.setViewportSize(size);
        const label = `${size.width}×${size.height}`;
        const trayBox = await box(tray);
        if (size === DESKTOP) expect(overlaps(trayBox, await box(nameHeader)), label).toBe(false);
        else expect(trayBox.height, label).toBeLessThanOrEqual(size.height / 2);
        // The header is one line: the title, the failure count and the buttons side by side.
        const title = await box(trayHeading());
        const failed = await box(page.locator('.upload-tray-failed'));
        const lineHeight = await trayHeading().evaluate((el) => parseFloat(getComputedStyle(el).lineHeight) || 20);
        expect(title.height, label).toBeLessThan(lineHeight * 1.5);
        expect(Math.abs(failed.y + failed.height / 2 - (title.y + title.height / 2)), label).toBeLessThan(4);
      }
      await page.setViewportSize(DESKTOP);
      await page.screenshot({ path: path.join(galleryDir, 'upload-tray-failed-desktop-light.png') });
      await page.getByRole('button', { name: 'Clear finished' }).click();
      await tray.waitFor({ state: 'detached' });

      // A bar and its label say the same while bytes go (throttled, so there is time to look).
      await api.createBucket('tray-big').then(async (bigId) => {
        await openBucket(bigId);
        const cdp = await context.newCDPSession(page);
        await cdp.send('Network.enable');
        await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: 1024 * 1024 });
        try {
          await page
            .getByLabel('Choose files to upload')
            .setInputFiles([{ name: 'slow.bin', mimeType: 'application/octet-stream', buffer: Buffer.alloc(4 * 1024 * 1024, 7) }]);
          const item = page.getByRole('listitem', { name: 'slow.bin', exact: true });
          let compared = 0;
          for (let i = 0; i < 40 && compared < 5; i++) {
            const reading = await item.evaluate((el) => {
              const fill = el.querySelector<HTMLElement>('.progress-fill');
              const track = el.querySelector<HTMLElement>('.progress');
              const percent = Number.parseFloat(el.querySelector('.upload-percent')?.textContent ?? '');
              return fill && track ? { bar: (fill.getBoundingClientRect().width / track.getBoundingClientRect().width) * 100, percent } : null;
            });
            if (reading && reading.percent > 0 && reading.percent < 100) {
              expect(Math.abs(reading.bar - reading.percent), JSON.stringify(reading)).toBeLessThanOrEqual(1);
              compared++;
            }
            await new Promise((resolve) => setTimeout(resolve, 150));
          }
          expect(compared).toBeGreaterThan(0);
        } finally {
          await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });
          await cdp.detach();
        }
        // All landed: the tray folds to its one-line summary by itself.
        await trayHeading().getByText('(1 of 1 done)').waitFor({ timeout: 60_000 });
        await page.getByRole('button', { name: 'Show uploads' }).waitFor();
        expect(await page.getByRole('list', { name: 'Upload progress' }).count()).toBe(0);
        expect((await box(tray)).height).toBeLessThan(64);
        await page.getByRole('button', { name: 'Clear finished' }).click();
      });
    }));

  it('photographs the main pages at both sizes, light and dark', () =>
    step('gallery', async () => {
      const bucketId = await api.createBucket('gallery');
      for (const name of ['Report-2.pdf', 'report-10.pdf', 'data-1.csv', 'notes/today.txt', 'photos/2026/cat.png']) await api.put(bucketId, name, 'x');
      const pages: [string, string, () => Promise<unknown>][] = [
        ['buckets', '/buckets', () => page.getByRole('heading', { name: 'Buckets', level: 1 }).waitFor()],
        ['bucket', `/buckets/${bucketId}`, () => page.getByRole('button', { name: 'Preview data-1.csv' }).waitFor()],
        ['sdk', '/sdk', () => page.getByRole('heading', { name: 'Quick start' }).waitFor()],
        ['usage', '/usage', () => page.getByRole('heading', { level: 1 }).waitFor()],
      ];
      for (const scheme of ['light', 'dark'] as const) {
        await page.emulateMedia({ colorScheme: scheme });
        for (const [name, url, ready] of pages) {
          await page.goto(url);
          await ready();
          for (const [sizeName, size] of [
            ['desktop', DESKTOP],
            ['phone', PHONE],
          ] as const) {
            await page.setViewportSize(size);
            await page.evaluate(() => window.scrollTo(0, 0));
            await page.screenshot({ path: path.join(galleryDir, `${name}-${sizeName}-${scheme}.png`), fullPage: true, animations: 'disabled' });
          }
          await page.setViewportSize(DESKTOP);
        }
      }
      await page.emulateMedia({ colorScheme: 'light' });
    }));
});
