/**
 * Operations on files and folders in the dashboard (issue 36, items 5–8), end
 * to end in Chromium against a real server: rename a file and a folder, move
 * a folder of 100 files to another bucket, the question when a name is taken,
 * delete a folder (and a selection of folders and files) after a confirmation
 * that counts its files, zip downloads of a folder and a selection, and the
 * details panel with a metadata edit that persists. What the page did is
 * checked through the API; screenshots of the new UI, light and dark, at
 * desktop and phone sizes go to test-artifacts/screenshots/file-operations/.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ConsoleWatch,
  DESKTOP,
  PHONE,
  poll,
  randomBytes,
  runStep,
  signedInDashboard,
  skipBrowserSuites,
  type DashboardServer as TestServer,
} from './e2e-helpers.js';

/** Not committed: the UI as it looks, for people to look at. */
const shotsDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../test-artifacts/screenshots/file-operations');

const run = promisify(execFile);

/** Every file under `dir`, by its path relative to it. */
async function filesIn(dir: string): Promise<Map<string, Buffer>> {
  const files = new Map<string, Buffer>();
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const full = path.join(entry.parentPath, entry.name);
    files.set(path.relative(dir, full).split(path.sep).join('/'), await readFile(full));
  }
  return files;
}

interface Listed {
  data: { filename: string; size: number }[];
}

describe.skipIf(skipBrowserSuites)('dashboard file operations (end to end, Chromium)', () => {
  let server: TestServer;
  let context: BrowserContext;
  let page: Page;
  const consoleWatch = new ConsoleWatch();
  /** The Client API checks Origin on cookie-authenticated changes. */
  let sameOrigin: { origin: string };

  const api = {
    async createBucket(name: string): Promise<number> {
      const res = await page.request.post('/api/buckets', { data: { name }, headers: sameOrigin });
      expect(res.status()).toBe(201);
      return ((await res.json()) as { data: { id: number } }).data.id;
    },
    async put(bucketId: number, filename: string, body: string | Buffer, type = 'text/plain'): Promise<void> {
      const path = filename.split('/').map(encodeURIComponent).join('/');
      const res = await page.request.put(`/api/buckets/${bucketId}/files/${path}`, { data: body, headers: { ...sameOrigin, 'content-type': type } });
      expect(res.status()).toBe(201);
    },
    /** Every name in the bucket, sorted. */
    async names(bucketId: number, prefix = ''): Promise<string[]> {
      const names: string[] = [];
      let cursor: string | null = null;
      do {
        const query = new URLSearchParams({ limit: '1000', ...(prefix ? { prefix } : {}), ...(cursor ? { cursor } : {}) });
        const res = await page.request.get(`/api/buckets/${bucketId}/files?${query}`);
        expect(res.status()).toBe(200);
        const body = (await res.json()) as Listed & { next_cursor?: string | null };
        names.push(...body.data.map((f) => f.filename));
        cursor = body.next_cursor ?? null;
      } while (cursor);
      return names.sort();
    },
    async details(
      bucketId: number,
      filename: string,
    ): Promise<{ etag: string; metadata: Record<string, string>; cache_control: string | null; content_type: string; content_disposition: string | null }> {
      const res = await page.request.get(`/api/buckets/${bucketId}/details/${encodeURIComponent(filename)}`);
      expect(res.status()).toBe(200);
      return ((await res.json()) as { data: Awaited<ReturnType<typeof api.details>> }).data;
    },
    async text(bucketId: number, filename: string): Promise<string> {
      const res = await page.request.get(`/api/buckets/${bucketId}/files/${encodeURIComponent(filename)}`);
      expect(res.status()).toBe(200);
      return res.text();
    },
  };

  /** The names in the table (files and folders), top to bottom. */
  const shownNames = () => page.locator('table.file-table tbody th.cell-name span').allTextContents();
  const toast = (text: string | RegExp) => page.locator('.toast').filter({ hasText: text });

  beforeAll(async () => {
    await mkdir(shotsDir, { recursive: true });
    ({ server, context, page, sameOrigin } = await signedInDashboard('ops', consoleWatch));
  }, 120_000);

  afterAll(async () => {
    await context?.close();
    await server?.close();
  });

  /** Runs a step; on failure keeps a screenshot of the page as it was. */
  const step = (name: string, run: () => Promise<void>) => runStep(page, consoleWatch, `ops-${name}`, run);

  /** The page as it is, at both sizes, light and dark; back to desktop and light after. */
  async function snap(name: string): Promise<void> {
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      for (const [size, viewport] of [
        ['desktop', DESKTOP],
        ['phone', PHONE],
      ] as const) {
        await page.setViewportSize(viewport);
        await page.screenshot({ path: path.join(shotsDir, `${name}-${size}-${scheme}.png`), animations: 'disabled' });
      }
    }
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize(DESKTOP);
  }

  async function rowMenu(label: string, item: string): Promise<void> {
    await page.getByRole('button', { name: label, exact: true }).click();
    await page.getByRole('menuitem', { name: item }).click();
  }

  it('renames a file and a folder, and moves a folder of 100 files to another bucket', async () => {
    await step('rename-move', async () => {
      const bucketId = await api.createBucket('projects');
      const otherId = await api.createBucket('archive');
      await api.put(bucketId, 'notes.txt', 'my notes');
      await api.put(bucketId, 'drafts/a.txt', 'a');
      await api.put(bucketId, 'drafts/deep/b.txt', 'b');
      await api.put(otherId, 'old/keep.txt', 'keep');
      const photos = Array.from({ length: 100 }, (_, i) => `photos/img-${String(i).padStart(3, '0')}.txt`);
      for (let i = 0; i < photos.length; i += 20) await Promise.all(photos.slice(i, i + 20).map((name) => api.put(bucketId, name, `bytes of ${name}`)));

      await page.goto(`/buckets/${bucketId}`);
      await page.getByRole('button', { name: 'Preview notes.txt' }).waitFor();

      // Rename a file: the name is selected up to its extension, so typing replaces just that.
      await rowMenu('More actions for notes.txt', 'Rename');
      const rename = page.getByRole('dialog', { name: 'Rename file “notes.txt”' });
      const field = rename.getByLabel('New name');
      expect(await field.evaluate((input: HTMLInputElement) => input.value.slice(input.selectionStart ?? 0, input.selectionEnd ?? 0))).toBe('notes');
      await field.pressSequentially('journal');
      expect(await field.inputValue()).toBe('journal.txt');
      await field.fill('a/b.txt');
      await rename.getByText('A name cannot contain /').waitFor();
      expect(await rename.getByRole('button', { name: 'Rename' }).isDisabled()).toBe(true);
      await field.fill('journal.txt');
      await snap('30-rename-file');
      await rename.getByRole('button', { name: 'Rename' }).click();
      await rename.waitFor({ state: 'hidden' });
      await toast('Renamed to journal.txt').waitFor();
      await page.getByRole('button', { name: 'Preview journal.txt' }).waitFor();
      expect(await api.text(bucketId, 'journal.txt')).toBe('my notes');

      // Rename a folder: everything in it follows.
      await rowMenu('More actions for folder drafts', 'Rename');
      const renameFolder = page.getByRole('dialog', { name: 'Rename folder “drafts”' });
      await renameFolder.getByLabel('New name').fill('final');
      await renameFolder.getByRole('button', { name: 'Rename' }).click();
      await toast('Renamed to final (2 files moved)').waitFor();
      await page.getByRole('link', { name: 'Open folder final' }).waitFor();
      expect((await api.names(bucketId)).filter((n) => !n.startsWith('photos/'))).toEqual(['final/a.txt', 'final/deep/b.txt', 'journal.txt']);

      // Move the folder of 100 files into another bucket's folder, opened in the picker.
      await page.getByRole('button', { name: 'More actions for folder photos' }).click();
      await snap('31-row-menu-folder');
      await page.getByRole('menuitem', { name: 'Move' }).click();
      const move = page.getByRole('dialog', { name: 'Move “photos”' });
      // Within this bucket, a folder cannot go into itself.
      expect(await move.getByRole('button', { name: 'Open folder photos' }).isDisabled()).toBe(true);
      await move.getByLabel('Bucket').selectOption({ label: 'archive' });
      await move.getByRole('button', { name: 'Open folder old' }).click();
      await move.getByText('To archive/old/').waitFor();
      await snap('32-move-dialog');
      await move.getByRole('button', { name: 'Move here' }).click();
      await move.waitFor({ state: 'hidden' });
      await toast('Moved 100 files to archive/old/').waitFor();
      await page.getByRole('link', { name: 'Open folder photos' }).waitFor({ state: 'detached' });
      expect(await api.names(bucketId, 'photos/')).toEqual([]);
      expect(await api.names(otherId)).toEqual(['old/keep.txt', ...photos.map((n) => `old/${n}`)].sort());
      expect(await api.text(otherId, 'old/photos/img-042.txt')).toBe('bytes of photos/img-042.txt');

      // A selection of a folder and a file moves together, with the files counted.
      await page.getByRole('checkbox', { name: 'Select folder final' }).click();
      await page.getByRole('checkbox', { name: 'Select journal.txt' }).click();
      await page.getByRole('region', { name: 'Selected files' }).getByRole('button', { name: 'Move' }).click();
      const moveBoth = page.getByRole('dialog', { name: 'Move 1 folder and 1 file' });
      await moveBoth.getByLabel('Bucket').selectOption({ label: 'archive' });
      await moveBoth.getByText('To archive/').waitFor();
      await moveBoth.getByRole('button', { name: 'Move here' }).click();
      await toast('Moved 3 files to archive/').waitFor();
      await page.getByText('This bucket is empty').waitFor();
      expect(await api.names(bucketId)).toEqual([]);
      expect((await api.names(otherId)).filter((n) => !n.startsWith('old/'))).toEqual(['final/a.txt', 'final/deep/b.txt', 'journal.txt']);

      // There, it is listed.
      await page.goto(`/buckets/${otherId}?folder=old%2Fphotos%2F`);
      await page.getByRole('button', { name: 'Preview img-000.txt' }).waitFor();
    });
  }, 180_000);

  it('asks before a move takes a name already there: Keep both, Replace, Cancel', async () => {
    // The browser logs each 409 the page asks about; that is the point here.
    await step('move-conflict', () =>
      consoleWatch.allowing([/status of 409/], async () => {
        const bucketId = await api.createBucket('clashes');
        await api.put(bucketId, 'report.txt', 'new report');
        await api.put(bucketId, 'memo.txt', 'new memo');
        await api.put(bucketId, 'plan.txt', 'new plan');
        await api.put(bucketId, 'done/report.txt', 'old report');
        await api.put(bucketId, 'done/memo.txt', 'old memo');
        await api.put(bucketId, 'done/plan.txt', 'old plan');
        await page.goto(`/buckets/${bucketId}`);
        await page.getByRole('button', { name: 'Preview report.txt' }).waitFor();

        const moveTo = async (file: string) => {
          await rowMenu(`More actions for ${file}`, 'Move');
          const move = page.getByRole('dialog', { name: `Move “${file}”` });
          await move.getByRole('button', { name: 'Open folder done' }).click();
          await move.getByText('To clashes/done/').waitFor();
          await move.getByRole('button', { name: 'Move here' }).click();
          return move;
        };

        // Keep both: the moved file takes the next free number.
        let move = await moveTo('report.txt');
        let prompt = page.getByRole('dialog', { name: 'Replace file?' });
        await prompt.getByText('done/report.txt already exists in clashes').waitFor();
        await snap('33-move-conflict');
        await prompt.getByRole('button', { name: 'Keep both' }).click();
        await move.waitFor({ state: 'hidden' });
        await toast('Moved 1 file to clashes/done/').waitFor();
        expect(await api.text(bucketId, 'done/report (1).txt')).toBe('new report');
        expect(await api.text(bucketId, 'done/report.txt')).toBe('old report');

        // Replace: the file there is overwritten.
        move = await moveTo('memo.txt');
        prompt = page.getByRole('dialog', { name: 'Replace file?' });
        await prompt.getByRole('button', { name: 'Replace' }).click();
        await move.waitFor({ state: 'hidden' });
        expect(await api.text(bucketId, 'done/memo.txt')).toBe('new memo');

        // Cancel: nothing moves, and the move dialog stays for another destination.
        move = await moveTo('plan.txt');
        prompt = page.getByRole('dialog', { name: 'Replace file?' });
        await prompt.getByRole('button', { name: 'Cancel' }).click();
        await prompt.waitFor({ state: 'hidden' });
        await move.waitFor({ state: 'hidden' });
        await toast(/Moved 0 files to clashes\/done\/; 1 left where it was/).waitFor();
        expect(await api.names(bucketId)).toEqual(['done/memo.txt', 'done/plan.txt', 'done/report (1).txt', 'done/report.txt', 'plan.txt']);
        expect(await api.text(bucketId, 'done/plan.txt')).toBe('old plan');
      }),
    );
  }, 120_000);

  it('deletes a folder with everything in it after a confirmation that counts its files, and a selection of folders and files', async () => {
    await step('delete-folders', async () => {
      const bucketId = await api.createBucket('cleanup');
      for (let i = 0; i < 12; i++) await api.put(bucketId, `logs/2026/day-${i}.log`, 'x'.repeat(10));
      await api.put(bucketId, 'logs/summary.txt', 'y'.repeat(5));
      await api.put(bucketId, 'tmp/a.txt', 'a');
      await api.put(bucketId, 'tmp/b/c.txt', 'c');
      await api.put(bucketId, 'cache/x.bin', 'x');
      await api.put(bucketId, 'one.txt', '1');
      await api.put(bucketId, 'two.txt', '2');
      await api.put(bucketId, 'keep.txt', 'k');
      await page.goto(`/buckets/${bucketId}`);
      await page.getByRole('button', { name: 'Preview keep.txt' }).waitFor();

      // One folder, from its row: the question counts the files in it and its subfolders.
      await page.getByRole('button', { name: 'Delete folder logs' }).click();
      const confirm = page.getByRole('dialog', { name: 'Delete folder “logs”?' });
      await confirm.getByText('13 files (125 bytes)').waitFor();
      await confirm.getByText('everything in logs/, its subfolders included').waitFor();
      await snap('34-delete-folder');
      await confirm.getByRole('button', { name: 'Delete folder' }).click();
      await confirm.waitFor({ state: 'hidden' });
      await toast('Deleted logs/ (13 files)').waitFor();
      expect(await api.names(bucketId, 'logs/')).toEqual([]);

      // Folders and files selected together, deleted with one confirmation.
      await page.getByRole('checkbox', { name: 'Select folder tmp' }).click();
      await page.getByRole('checkbox', { name: 'Select folder cache' }).click();
      await page.getByRole('checkbox', { name: 'Select one.txt' }).click();
      await page.getByRole('checkbox', { name: 'Select two.txt' }).click();
      const bar = page.getByRole('region', { name: 'Selected files' });
      await bar.getByText('2 folders and 2 files selected').waitFor();
      await snap('35-selection-folders-files');
      await bar.getByRole('button', { name: 'Delete' }).click();
      const bulk = page.getByRole('dialog', { name: 'Delete 2 folders and 2 files?' });
      await bulk.getByText('5 files (5 bytes)').waitFor();
      await bulk.getByText('tmp/ (2 files)').waitFor();
      await bulk.getByRole('button', { name: 'Delete all' }).click();
      await bulk.waitFor({ state: 'hidden' });
      await toast('Deleted 2 folders, 5 files in all').waitFor();
      expect(await api.names(bucketId)).toEqual(['keep.txt']);
      await poll(shownNames).toEqual(['keep.txt']);
    });
  }, 120_000);

  /** Saves a download the page starts with `click`, unzips it, and gives its files and the zip's name. */
  async function downloadZip(click: () => Promise<void>): Promise<{ name: string; files: Map<string, Buffer> }> {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'pail-zip-'));
    try {
      const [download] = await Promise.all([page.waitForEvent('download'), click()]);
      const zip = path.join(dir, 'download.zip');
      await download.saveAs(zip);
      await run('/usr/bin/unzip', ['-q', zip, '-d', path.join(dir, 'out')]);
      return { name: download.suggestedFilename(), files: await filesIn(path.join(dir, 'out')) };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  it('downloads a folder, and a selection of folders and files, as one zip with the same bytes', async () => {
    await step('zip', async () => {
      const bucketId = await api.createBucket('albums');
      const stored = new Map<string, Buffer>();
      const names = ['photos/beach.jpg', 'photos/2026/may/sunset.jpg', 'photos/2026/notes.txt', 'music/song.mp3', 'readme.md', 'cover.png'];
      for (const [i, name] of names.entries()) {
        const bytes = randomBytes(1000 + i * 40_000, i + 1);
        stored.set(name, bytes);
        await api.put(bucketId, name, bytes, 'application/octet-stream');
      }
      await page.goto(`/buckets/${bucketId}`);
      await page.getByRole('link', { name: 'Open folder photos' }).waitFor();

      // A folder, from its row: entries named inside it, bytes as stored.
      const folder = await downloadZip(() => page.getByRole('button', { name: 'Download photos as a zip' }).click());
      expect(folder.name).toBe('photos.zip');
      expect([...folder.files.keys()].sort()).toEqual(['2026/may/sunset.jpg', '2026/notes.txt', 'beach.jpg']);
      for (const [entry, bytes] of folder.files) expect(bytes.equals(stored.get(`photos/${entry}`) ?? Buffer.alloc(0)), entry).toBe(true);

      // A selection of a folder and two files, from the toolbar.
      await page.getByRole('checkbox', { name: 'Select folder music' }).click();
      await page.getByRole('checkbox', { name: 'Select readme.md' }).click();
      await page.getByRole('checkbox', { name: 'Select cover.png' }).click();
      const bar = page.getByRole('region', { name: 'Selected files' });
      const selection = await downloadZip(() => bar.getByRole('button', { name: 'Download zip' }).click());
      expect(selection.name).toBe('albums.zip');
      expect([...selection.files.keys()].sort()).toEqual(['cover.png', 'music/song.mp3', 'readme.md']);
      for (const [entry, bytes] of selection.files) expect(bytes.equals(stored.get(entry) ?? Buffer.alloc(0)), entry).toBe(true);

      // A refusal stays off the page and is said in a toast: the folder went since the list was shown.
      const deleted = await page.request.delete(`/api/buckets/${bucketId}/folders/music/`, { headers: sameOrigin });
      expect(deleted.status()).toBe(200);
      await consoleWatch.allowing([/status of 404/], async () => {
        await page.getByRole('button', { name: 'Download music as a zip' }).click();
        await toast(/Could not download the zip: Nothing to zip/).waitFor();
      });
      expect(new URL(page.url()).pathname).toBe(`/buckets/${bucketId}`);
    });
  }, 120_000);

  it('downloads a folder of 1,000 files as one zip, byte for byte, while the server’s memory stays within idle + 64 MiB', async () => {
    await step('zip-1000', async () => {
      const bucketId = await api.createBucket('thousand');
      const stored = new Map<string, Buffer>();
      for (let i = 0; i < 1000; i++) stored.set(`many/${i % 10 === 0 ? `deep/${i}` : i}.bin`, randomBytes(2000 + ((i * 7919) % 60_000), i + 7));
      const queue = [...stored];
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          for (let next = queue.shift(); next; next = queue.shift()) await api.put(bucketId, next[0], next[1], 'application/octet-stream');
        }),
      );
      await page.goto(`/buckets/${bucketId}`);
      await page.getByRole('link', { name: 'Open folder many' }).waitFor();

      // The server runs in this process: its resident memory, sampled while the browser downloads the zip.
      const idle = process.memoryUsage().rss;
      let peak = idle;
      const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
      let zip: { name: string; files: Map<string, Buffer> };
      try {
        zip = await downloadZip(() => page.getByRole('button', { name: 'Download many as a zip' }).click());
      } finally {
        clearInterval(sampler);
      }
      expect(peak - idle, `grew ${Math.round((peak - idle) / 2 ** 20)} MiB`).toBeLessThan(64 * 2 ** 20);
      expect(zip.name).toBe('many.zip');
      expect(zip.files.size).toBe(1000);
      for (const [name, bytes] of stored) expect(zip.files.get(name.slice('many/'.length))?.equals(bytes), name).toBe(true);
    });
  }, 180_000);

  it('shows a file’s details, and its metadata and headers edited persist', async () => {
    await step('details', async () => {
      const bucketId = await api.createBucket('papers');
      await api.put(bucketId, 'reports/q3.csv', 'region,total\nnorth,12\n', 'text/csv');
      const before = await api.details(bucketId, 'reports/q3.csv');
      await page.goto(`/buckets/${bucketId}?folder=reports%2F`);
      await page.getByRole('button', { name: 'More actions for q3.csv' }).waitFor();

      await rowMenu('More actions for q3.csv', 'Details');
      const panel = page.getByRole('dialog', { name: 'q3.csv' });
      await panel.getByTestId('details-etag').getByText(before.etag).waitFor();
      await panel.getByText('22 bytes').waitFor();
      await panel.getByText('(text/csv)').waitFor();
      await panel.getByText(`${server.url}/storage/`).waitFor();
      expect(await panel.getByLabel('Content type').inputValue()).toBe('text/csv');
      await panel.getByText('None.').waitFor();

      // Add two pairs and a cache header; save.
      await panel.getByRole('button', { name: 'Add metadata' }).click();
      await panel.getByLabel('Metadata name 1').fill('Author');
      await panel.getByLabel('Metadata value 1').fill('Ada Lovelace');
      await panel.getByRole('button', { name: 'Add metadata' }).click();
      await panel.getByLabel('Metadata name 2').fill('reviewed');
      await panel.getByLabel('Metadata value 2').fill('yes');
      await panel.getByLabel('Cache control').fill('max-age=600');
      await panel.getByLabel('Content disposition').fill('attachment; filename="q3.csv"');
      await snap('36-details-panel');
      await panel.getByRole('button', { name: 'Save changes' }).click();
      await toast('Details saved').waitFor();
      const after = await api.details(bucketId, 'reports/q3.csv');
      expect(after.metadata).toEqual({ author: 'Ada Lovelace', reviewed: 'yes' });
      expect(after.cache_control).toBe('max-age=600');
      expect(after.content_disposition).toBe('attachment; filename="q3.csv"');
      expect(after.etag).toBe(before.etag);
      // After a reload the panel shows what was saved; remove one pair and clear the header.
      await page.reload();
      await rowMenu('More actions for q3.csv', 'Details');
      expect(await panel.getByLabel('Metadata name 1').inputValue()).toBe('author');
      expect(await panel.getByLabel('Metadata value 1').inputValue()).toBe('Ada Lovelace');
      expect(await panel.getByLabel('Cache control').inputValue()).toBe('max-age=600');
      await panel.getByRole('button', { name: 'Remove metadata reviewed' }).click();
      await panel.getByLabel('Cache control').fill('');
      await panel.getByRole('button', { name: 'Save changes' }).click();
      await toast('Details saved').waitFor();
      await poll(async () => (await api.details(bucketId, 'reports/q3.csv')).metadata).toEqual({ author: 'Ada Lovelace' });
      expect((await api.details(bucketId, 'reports/q3.csv')).cache_control).toBeNull();

      // A refusal is shown as the server words it, and nothing changes.
      await panel.getByRole('button', { name: 'Add metadata' }).click();
      await panel.getByLabel('Metadata name 2').fill('notes');
      await panel.getByLabel('Metadata value 2').fill('x'.repeat(2100));
      await consoleWatch.allowing([/status of 400/], async () => {
        await panel.getByRole('button', { name: 'Save changes' }).click();
        await panel.getByText(/Metadata too large: .* at most 2048/).waitFor();
      });
      expect((await api.details(bucketId, 'reports/q3.csv')).metadata).toEqual({ author: 'Ada Lovelace' });
      await panel.getByRole('button', { name: 'Undo changes' }).click();
      await panel.getByRole('button', { name: 'Close dialog' }).click();
      await panel.waitFor({ state: 'hidden' });
    });
  }, 120_000);
});
