/**
 * The file browser at scale (issue 25), end to end in Chromium against a real
 * server: search anywhere in names in any case, sorting by a column both ways,
 * selecting files and deleting them together, "Modified" moving on replace,
 * the view in the URL surviving a reload; and the bucket's settings, the
 * question before making it public, and the name typed to delete a bucket
 * that holds files. What the page did is checked through the API.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer } from '../../server/test/helpers/server.js';
import { buildDashboard, ConsoleWatch, DESKTOP, poll, screenshotDir, sharedBrowser, shoot, skipBrowserSuites, STEP_TIMEOUT } from './e2e-helpers.js';

type TestServer = Awaited<ReturnType<typeof startTestServer>>;

interface Listed {
  data: { filename: string; size: number; updated_at: string }[];
}

describe.skipIf(skipBrowserSuites)('dashboard file browser (end to end, Chromium)', () => {
  let server: TestServer;
  let browser: Browser;
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
    async put(bucketId: number, filename: string, body: string): Promise<void> {
      const path = filename.split('/').map(encodeURIComponent).join('/');
      const res = await page.request.put(`/api/buckets/${bucketId}/files/${path}`, { data: body, headers: { ...sameOrigin, 'content-type': 'text/plain' } });
      expect(res.status()).toBe(201);
    },
    async list(bucketId: number): Promise<Listed> {
      const res = await page.request.get(`/api/buckets/${bucketId}/files`);
      expect(res.status()).toBe(200);
      return (await res.json()) as Listed;
    },
    async bucket(bucketId: number): Promise<{ public: boolean; max_file_bytes: number | null; allowed_types: string[] | null }> {
      const res = await page.request.get(`/api/buckets/${bucketId}`);
      return ((await res.json()) as { data: { public: boolean; max_file_bytes: number | null; allowed_types: string[] | null } }).data;
    },
  };

  /** The names of the files in the table, top to bottom. */
  const shownFiles = () => page.locator('table.file-table tbody tr:not(.folder-row) th.cell-name span').allTextContents();

  beforeAll(async () => {
    const dashboard = await buildDashboard();
    await mkdir(screenshotDir, { recursive: true });
    server = await startTestServer({ env: { DASHBOARD_DIR: dashboard } });
    sameOrigin = { origin: server.url };
    browser = await sharedBrowser();
    context = await browser.newContext({ viewport: DESKTOP, baseURL: server.url, acceptDownloads: true });
    page = await context.newPage();
    page.setDefaultTimeout(STEP_TIMEOUT);
    consoleWatch.attach(page);

    await page.goto('/signup');
    await page.getByLabel('Email').fill(`browser-${Date.now()}@example.com`);
    await page.getByLabel('Password').fill('correct horse battery');
    await page.getByRole('button', { name: 'Sign up' }).click();
    await page.waitForURL('**/buckets');
  }, 120_000);

  afterAll(async () => {
    await context?.close();
    await server?.close();
  });

  /** Runs a step; on failure keeps a screenshot of the page as it was. */
  async function step(name: string, run: () => Promise<void>): Promise<void> {
    try {
      await run();
    } catch (error) {
      await page.screenshot({ path: path.join(screenshotDir, `failure-${name}.png`), fullPage: true }).catch(() => {});
      throw error;
    }
    expect(consoleWatch.errors).toEqual([]);
  }

  it('searches, sorts, keeps the view in the URL, selects and deletes in bulk, and shows Modified moving', async () => {
    await step('browse', async () => {
      const bucketId = await api.createBucket('library');
      const files: [string, number][] = [
        ['Annual-Report-2026.pdf', 40],
        ['docs/meeting-notes.txt', 5],
        ['docs/reports/q1-REPORT.txt', 12],
        ['docs/tiny.txt', 1],
        ['docs/medium.txt', 20],
        ['docs/huge.txt', 90],
        ['readme.md', 3],
      ];
      for (const [name, size] of files) await api.put(bucketId, name, 'x'.repeat(size));
      await page.goto(`/buckets/${bucketId}`);
      await page.getByRole('button', { name: 'Preview readme.md' }).waitFor();
      await page
        .getByTestId('storage-meter')
        .getByText(/of 1 GiB/)
        .waitFor();

      // Search: a middle part of a name, in another case, found in every folder below.
      await page.getByLabel('Search files by name').fill('rEpOrT');
      await poll(shownFiles).toEqual(['Annual-Report-2026.pdf', 'docs/reports/q1-REPORT.txt']);
      await poll(() => new URL(page.url()).searchParams.get('q')).toBe('rEpOrT');
      await page.getByLabel('Search files by name').fill('');
      await page.getByRole('button', { name: 'Preview readme.md' }).waitFor();

      // Sort by size, both ways, inside a folder; the folder comes first.
      await page.getByRole('link', { name: 'Open folder docs' }).click();
      await page.getByRole('button', { name: 'Preview tiny.txt' }).waitFor();
      const sizeHeader = page.getByRole('columnheader', { name: 'Size' });
      await sizeHeader.getByRole('button').click();
      await poll(() => sizeHeader.getAttribute('aria-sort')).toBe('ascending');
      await poll(shownFiles).toEqual(['tiny.txt', 'meeting-notes.txt', 'medium.txt', 'huge.txt']);
      await sizeHeader.getByRole('button').click();
      await poll(() => sizeHeader.getAttribute('aria-sort')).toBe('descending');
      await poll(shownFiles).toEqual(['huge.txt', 'medium.txt', 'meeting-notes.txt', 'tiny.txt']);
      await page.getByRole('link', { name: 'Open folder reports' }).waitFor();

      // The folder, the sort and a search are in the URL; a reload shows the same view.
      await page.getByLabel('Search files by name').fill('T');
      await poll(() => new URL(page.url()).searchParams.get('q')).toBe('T');
      const url = new URL(page.url());
      expect(Object.fromEntries(url.searchParams)).toEqual({ folder: 'docs/', q: 'T', sort: 'size', order: 'desc' });
      await poll(shownFiles).toEqual(['huge.txt', 'medium.txt', 'reports/q1-REPORT.txt', 'meeting-notes.txt', 'tiny.txt']);
      await page.reload();
      await poll(shownFiles).toEqual(['huge.txt', 'medium.txt', 'reports/q1-REPORT.txt', 'meeting-notes.txt', 'tiny.txt']);
      expect(await page.getByLabel('Search files by name').inputValue()).toBe('T');
      expect(await sizeHeader.getAttribute('aria-sort')).toBe('descending');
      await shoot(page, '20-file-browser-sorted');

      // Select three files (one, then shift-click for the range) and delete them with one confirmation.
      await page.getByLabel('Search files by name').fill('');
      await poll(shownFiles).toEqual(['huge.txt', 'medium.txt', 'meeting-notes.txt', 'tiny.txt']);
      await page.getByRole('checkbox', { name: 'Select huge.txt' }).click();
      await page.getByRole('checkbox', { name: 'Select meeting-notes.txt' }).click({ modifiers: ['Shift'] });
      const bar = page.getByRole('region', { name: 'Selected files' });
      await bar.getByText('3 files selected').waitFor();
      expect(await page.getByRole('checkbox', { name: 'Select tiny.txt' }).isChecked()).toBe(false);
      await shoot(page, '21-file-browser-selected');
      // Download: the selection as one zip, named after the folder (its entries: file-operations.e2e.test.ts).
      const [download] = await Promise.all([page.waitForEvent('download'), bar.getByRole('button', { name: 'Download zip' }).click()]);
      expect(download.suggestedFilename()).toBe('docs.zip');
      await bar.getByRole('button', { name: 'Delete' }).click();
      const confirm = page.getByRole('dialog', { name: 'Delete 3 files?' });
      await confirm.getByText('docs/medium.txt').waitFor();
      await confirm.getByRole('button', { name: 'Delete 3 files' }).click();
      await confirm.waitFor({ state: 'hidden' });
      await page.getByText('3 files deleted').waitFor();
      await poll(shownFiles).toEqual(['tiny.txt']);
      expect((await api.list(bucketId)).data.map((f) => f.filename)).toEqual([
        'Annual-Report-2026.pdf',
        'docs/reports/q1-REPORT.txt',
        'docs/tiny.txt',
        'readme.md',
      ]);

      // Select all on the page, then clear.
      await page.getByRole('checkbox', { name: 'Select everything on this page' }).click();
      await bar.getByText('1 folder and 1 file selected').waitFor();
      await bar.getByRole('button', { name: 'Clear selection' }).click();
      await bar.waitFor({ state: 'detached' });

      // Modified moves when a file is replaced.
      const modified = () =>
        page
          .getByRole('row', { name: /tiny\.txt/ })
          .locator('time')
          .getAttribute('datetime');
      const before = await modified();
      expect(before).toBe((await api.list(bucketId)).data.find((f) => f.filename === 'docs/tiny.txt')?.updated_at);
      // Times are kept to the millisecond: a replace made now is later, with no wait.
      await api.put(bucketId, 'docs/tiny.txt', 'replaced');
      await page.reload();
      await poll(async () => Date.parse((await modified()) ?? '')).toBeGreaterThan(Date.parse(before ?? ''));
      await page.getByRole('columnheader', { name: 'Modified' }).waitFor();
    });
  }, 120_000);

  it('keeps a later page in the URL: a reload shows that page, sorted as it was', async () => {
    await step('page-in-url', async () => {
      const bucketId = await api.createBucket('many');
      await Promise.all(Array.from({ length: 53 }, (_, i) => api.put(bucketId, `item-${String(i).padStart(2, '0')}.txt`, 'x'.repeat(i + 1))));
      await page.goto(`/buckets/${bucketId}?sort=size&order=desc`);
      const pager = page.getByRole('navigation', { name: 'File pages' });
      await pager.getByText('Page 1 · files 1–50').waitFor();
      await poll(async () => (await shownFiles())[0]).toBe('item-52.txt');
      await pager.getByRole('button', { name: 'Next' }).click();
      await pager.getByText('Page 2 · files 51–53').waitFor();
      await poll(shownFiles).toEqual(['item-02.txt', 'item-01.txt', 'item-00.txt']);
      const url = new URL(page.url());
      expect(url.searchParams.get('page')).toBe('2');
      expect(url.searchParams.get('cursor')).toBeTruthy();
      await page.reload();
      await pager.getByText('Page 2 · files 51–53').waitFor();
      await poll(shownFiles).toEqual(['item-02.txt', 'item-01.txt', 'item-00.txt']);
      // After a reload the earlier cursors are gone: Previous goes to the first page.
      await pager.getByRole('button', { name: 'Previous' }).click();
      await pager.getByText('Page 1 · files 1–50').waitFor();
      await poll(async () => (await shownFiles())[0]).toBe('item-52.txt');
      // The browser's back button returns to page 2.
      await page.goBack();
      await pager.getByText('Page 2 · files 51–53').waitFor();
    });
  }, 120_000);

  it('sets bucket limits, asks before making a bucket public, and wants the name to delete a bucket with files', async () => {
    await step('bucket-settings', async () => {
      const bucketId = await api.createBucket('guarded');
      await api.put(bucketId, 'keep.txt', 'keep');
      await page.goto(`/buckets/${bucketId}`);
      await page.getByRole('button', { name: 'Preview keep.txt' }).waitFor();

      // Limits.
      await page.getByRole('button', { name: 'Settings', exact: true }).click();
      const settings = page.getByRole('dialog', { name: 'Settings of guarded' });
      await settings.getByLabel('Largest file').fill('5');
      await settings.getByLabel('Unit').selectOption('MiB');
      await settings.getByLabel('Allowed file types').fill('image/*, application/pdf');
      await shoot(page, '22-bucket-settings');
      await settings.getByRole('button', { name: 'Save settings' }).click();
      await settings.waitFor({ state: 'hidden' });
      await poll(() => api.bucket(bucketId)).toMatchObject({ max_file_bytes: 5 * 1024 * 1024, allowed_types: ['image/*', 'application/pdf'] });
      // The server's refusal of a bad type is shown in the dialog.
      await page.getByRole('button', { name: 'Settings', exact: true }).click();
      expect(await settings.getByLabel('Largest file').inputValue()).toBe('5');
      await settings.getByLabel('Allowed file types').fill('not a type');
      await consoleWatch.allowing([/status of 400/], async () => {
        await settings.getByRole('button', { name: 'Save settings' }).click();
        await settings.getByText('is not a MIME type').waitFor();
      });
      // Cleared fields clear the limits.
      await settings.getByLabel('Largest file').fill('');
      await settings.getByLabel('Allowed file types').fill('');
      await settings.getByRole('button', { name: 'Save settings' }).click();
      await settings.waitFor({ state: 'hidden' });
      await poll(() => api.bucket(bucketId)).toMatchObject({ max_file_bytes: null, allowed_types: null });

      // Making it public asks first; cancelling leaves it private.
      const visibility = page.getByRole('switch', { name: 'Public access for guarded' });
      await visibility.click();
      const ask = page.getByRole('dialog', { name: 'Make “guarded” public?' });
      await ask.getByText('1 file in it now').waitFor();
      await ask.getByRole('button', { name: 'Cancel' }).click();
      await ask.waitFor({ state: 'hidden' });
      expect((await api.bucket(bucketId)).public).toBe(false);
      await visibility.click();
      await ask.getByRole('button', { name: 'Make public' }).click();
      await poll(async () => (await api.bucket(bucketId)).public).toBe(true);
      // Private again needs no question.
      await visibility.click();
      await poll(async () => (await api.bucket(bucketId)).public).toBe(false);

      // Deleting a bucket that holds files needs its name typed.
      await page.getByRole('button', { name: 'Delete bucket' }).click();
      const remove = page.getByRole('dialog', { name: 'Delete bucket “guarded”?' });
      const confirmButton = remove.getByRole('button', { name: 'Delete bucket' });
      expect(await confirmButton.isDisabled()).toBe(true);
      await remove.getByLabel('Type guarded to confirm').fill('guarde');
      expect(await confirmButton.isDisabled()).toBe(true);
      await remove.getByLabel('Type guarded to confirm').fill('guarded');
      await confirmButton.click();
      await page.waitForURL('**/buckets');
      expect((await page.request.get(`/api/buckets/${bucketId}`)).status()).toBe(404);

      // An empty bucket goes without typing.
      const emptyId = await api.createBucket('empty-one');
      await page.goto(`/buckets/${emptyId}`);
      await page.getByText('This bucket is empty').waitFor();
      await page.getByRole('button', { name: 'Delete bucket' }).click();
      const removeEmpty = page.getByRole('dialog', { name: 'Delete bucket “empty-one”?' });
      expect(await removeEmpty.getByLabel(/to confirm/).count()).toBe(0);
      await removeEmpty.getByRole('button', { name: 'Delete bucket' }).click();
      await page.waitForURL('**/buckets');
    });
  }, 120_000);
});
