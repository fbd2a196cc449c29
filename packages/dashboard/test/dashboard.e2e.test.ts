/**
 * The dashboard end to end: a real Pail server (temporary data directory,
 * real port) serving the built dashboard, driven by headless Chromium.
 *
 * One walk through the app, step by step, as a user would: sign up, create a
 * bucket, upload, preview, download, search, make it public, usage, API keys,
 * the storage cap, delete. Any browser console error fails the run, except the
 * few network errors a step provokes on purpose (each allowed only during its
 * step). Screenshots of every page at desktop and phone widths are saved to
 * test-artifacts/screenshots/ at the repository root.
 */
import { mkdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer } from '../../server/test/helpers/server.js';
import {
  buildDashboard,
  ConsoleWatch,
  DESKTOP,
  poll,
  randomBytes,
  screenshotDir,
  sharedBrowser,
  shoot,
  skipBrowserSuites,
  STEP_TIMEOUT,
} from './e2e-helpers.js';

/** Small enough to hit with one upload, big enough for the normal steps. */
const STORAGE_CAP = 300_000;

type TestServer = Awaited<ReturnType<typeof startTestServer>>;

/** A small valid PNG (2x2 pixels), so the image preview has something real to show. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAYAAABytg0kAAAAFklEQVR4nGP8z8Dwn4GBgYGJgYGBAQAi7QMBWc1IoQAAAABJRU5ErkJggg==', 'base64');

describe.skipIf(skipBrowserSuites)('dashboard (end to end, Chromium)', () => {
  let server: TestServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const consoleWatch = new ConsoleWatch();
  const email = `e2e-${Date.now()}@example.com`;
  const password = 'correct horse battery';

  beforeAll(async () => {
    const dashboard = await buildDashboard();
    await mkdir(screenshotDir, { recursive: true });
    await rm(path.join(screenshotDir, 'failure.png'), { force: true });
    server = await startTestServer({ env: { DASHBOARD_DIR: dashboard, PLAN_FREE_STORAGE_BYTES: String(STORAGE_CAP) } });
    browser = await sharedBrowser();
    context = await browser.newContext({
      viewport: DESKTOP,
      acceptDownloads: true,
      baseURL: server.url,
      permissions: ['clipboard-read', 'clipboard-write'],
    });
    page = await context.newPage();
    page.setDefaultTimeout(STEP_TIMEOUT);
    consoleWatch.attach(page);
  }, 120_000);

  afterAll(async () => {
    await context?.close();
    await server?.close();
  });

  it('walks through sign-up, buckets, files, usage, keys, the storage cap and deletion', async () => {
    try {
      await walkThrough();
    } catch (error) {
      // The page as it was when a step failed, for whoever reads the failure.
      await page.screenshot({ path: path.join(screenshotDir, 'failure.png'), fullPage: true }).catch(() => {});
      throw error;
    }
    expect(consoleWatch.errors).toEqual([]);
  }, 180_000);

  async function walkThrough(): Promise<void> {
    // --- Sign up -------------------------------------------------------------
    await page.goto('/');
    await page.waitForURL('**/login');
    await poll(() => page.getByRole('heading', { name: 'Log in to Pail' }).isVisible()).toBe(true);
    await shoot(page, '01-login');

    await page.getByRole('link', { name: 'Create an account' }).click();
    await page.waitForURL('**/signup');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill('short');
    await page.getByRole('button', { name: 'Sign up' }).click();
    await page.getByText('Use at least 8 characters.').waitFor();
    await shoot(page, '02-signup');
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign up' }).click();
    await page.waitForURL('**/buckets');
    await page.getByText('No buckets yet').waitFor();
    await shoot(page, '03-buckets-empty');

    // --- Create a bucket (name checked as you type) --------------------------
    await page.getByRole('button', { name: 'New bucket' }).first().click();
    const dialog = page.getByRole('dialog', { name: 'Create a bucket' });
    await dialog.getByLabel('Bucket name').fill('my photos');
    await dialog.getByText('may contain only lowercase letters').waitFor();
    await dialog.getByLabel('Bucket name').fill('-photos');
    await dialog.getByText('must start and end with a lowercase letter or digit').waitFor();
    await shoot(page, '04-create-bucket');
    await dialog.getByLabel('Bucket name').fill('photos');
    await dialog.getByText('is a valid name').waitFor();
    await dialog.getByRole('button', { name: 'Create bucket' }).click();
    await page.waitForURL(/\/buckets\/\d+$/);
    const bucketPath = new URL(page.url()).pathname;
    const bucketId = Number(bucketPath.split('/').pop());
    await page.getByRole('heading', { name: /photos/ }).waitFor();
    await poll(() => page.getByTestId('bucket-object-count').textContent()).toBe('0 objects');
    await page.getByText('This bucket is empty').waitFor();
    await shoot(page, '05-bucket-empty');

    // --- Upload two files at once, each with its own progress bar -------------
    const hello = Buffer.from('Hello from the Pail dashboard!\nSecond line.\n');
    const data = randomBytes(60_000, 7);
    await page.getByLabel('Choose files to upload').setInputFiles([
      { name: 'hello.txt', mimeType: 'text/plain', buffer: hello },
      { name: 'data.bin', mimeType: 'application/octet-stream', buffer: data },
    ]);
    const uploads = page.getByRole('list', { name: 'Upload progress' });
    await page.getByRole('heading', { name: 'Uploads (2 of 2 done)' }).waitFor();
    // All landed: the tray folds to its summary; opened again, it shows each at 100%.
    await page.getByRole('button', { name: 'Show uploads' }).click();
    for (const name of ['hello.txt', 'data.bin']) {
      await poll(() => uploads.getByRole('progressbar', { name: `Upload of ${name}` }).getAttribute('aria-valuenow')).toBe('100');
    }
    await poll(() => page.getByTestId('bucket-object-count').textContent()).toBe('2 objects');
    await page.getByRole('button', { name: 'Preview hello.txt' }).waitFor();
    await page.getByRole('button', { name: 'Details of data.bin' }).waitFor();

    // A third file, by itself, to show an image preview.
    await page.getByLabel('Choose files to upload').setInputFiles([{ name: 'pixel.png', mimeType: 'image/png', buffer: PNG }]);
    await page.getByRole('heading', { name: 'Uploads (3 of 3 done)' }).waitFor();
    await poll(() => page.getByTestId('bucket-object-count').textContent()).toBe('3 objects');
    await shoot(page, '06-bucket-files');

    // --- Preview text and image ----------------------------------------------
    await page.getByRole('button', { name: 'Preview hello.txt' }).click();
    const preview = page.getByRole('dialog', { name: 'hello.txt' });
    await poll(() => preview.getByLabel('Contents of hello.txt').textContent()).toBe(hello.toString());
    const fileUrl = (await preview.locator('.url-text').textContent()) ?? '';
    expect(fileUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/storage\/.+\/hello\.txt$/);
    await shoot(page, '07-preview-text');
    await preview.getByRole('button', { name: 'Close dialog' }).click();

    await page.getByRole('button', { name: 'Preview pixel.png' }).click();
    const imagePreview = page.getByRole('dialog', { name: 'pixel.png' });
    await imagePreview.getByRole('img', { name: 'Preview of pixel.png' }).waitFor();
    await poll(() => imagePreview.getByRole('img').evaluate((img) => (img as HTMLImageElement).naturalWidth)).toBe(2);
    await page.keyboard.press('Escape');
    await imagePreview.waitFor({ state: 'hidden' });

    // --- Download one and compare the bytes -----------------------------------
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download data.bin' }).click()]);
    const downloaded = await readFile(await download.path());
    expect(downloaded.equals(data)).toBe(true);

    // --- Search: anywhere in the name, any case --------------------------------------
    await page.getByLabel('Search files by name').fill('ELL');
    await page.getByRole('button', { name: 'Details of data.bin' }).waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'Preview hello.txt' }).waitFor();
    await page.getByLabel('Search files by name').fill('zzz');
    await page.getByText('No matching files').waitFor();
    await page.getByLabel('Search files by name').fill('');
    await page.getByRole('button', { name: 'Details of data.bin' }).waitFor();

    // --- Private, then public: the file URL without a session -----------------
    const privateResponse = await fetch(fileUrl);
    expect(privateResponse.status).not.toBe(200);
    const visibility = page.getByRole('switch', { name: 'Public access for photos' });
    expect(await visibility.getAttribute('aria-checked')).toBe('false');
    await visibility.click();
    const makePublic = page.getByRole('dialog', { name: 'Make “photos” public?' });
    await makePublic.getByRole('button', { name: 'Make public' }).click();
    await poll(() => visibility.getAttribute('aria-checked')).toBe('true');
    await page.getByText('photos is now public').waitFor();
    const publicResponse = await fetch(fileUrl);
    expect(publicResponse.status).toBe(200);
    expect(Buffer.from(await publicResponse.arrayBuffer()).equals(hello)).toBe(true);

    // --- Copy a file's URL ------------------------------------------------------
    await page.getByRole('button', { name: 'Copy URL of hello.txt' }).click();
    await page.getByText('Copied to the clipboard').first().waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(fileUrl);

    // --- Buckets list shows the new counts -------------------------------------
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Buckets' }).click();
    await page.waitForURL('**/buckets');
    const row = page.getByRole('row', { name: /photos/ });
    await row.getByText('3', { exact: true }).waitFor();
    await row.getByRole('switch', { name: 'Public access for photos' }).waitFor();
    await shoot(page, '08-buckets');

    // --- Paging through a larger bucket (filled through the Client API) -------
    const api = { origin: server.url };
    const archive = await page.request.post('/api/buckets', { data: { name: 'archive' }, headers: api });
    expect(archive.status()).toBe(201);
    const archiveId = ((await archive.json()) as { data: { id: number } }).data.id;
    const puts = Array.from({ length: 55 }, (_, i) =>
      page.request.put(`/api/buckets/${archiveId}/files/log-${String(i).padStart(3, '0')}.txt`, {
        data: `entry ${i}\n`,
        headers: { ...api, 'content-type': 'text/plain' },
      }),
    );
    for (const put of await Promise.all(puts)) expect(put.status()).toBe(201);
    await page.reload();
    await page.getByRole('link', { name: 'archive' }).click();
    await page.waitForURL(`**/buckets/${archiveId}`);
    const pager = page.getByRole('navigation', { name: 'File pages' });
    await pager.getByText('Page 1 · files 1–50').waitFor();
    await page.getByRole('button', { name: 'Preview log-049.txt' }).waitFor();
    await shoot(page, '09-bucket-paging');
    await pager.getByRole('button', { name: 'Next' }).click();
    await pager.getByText('Page 2 · files 51–55').waitFor();
    await page.getByRole('button', { name: 'Preview log-054.txt' }).waitFor();
    expect(await pager.getByRole('button', { name: 'Next' }).isDisabled()).toBe(true);
    await pager.getByRole('button', { name: 'Previous' }).click();
    await page.getByRole('button', { name: 'Preview log-000.txt' }).waitFor();
    await page.getByLabel('Search files by name').fill('log-05');
    await page.getByRole('button', { name: 'Preview log-055.txt' }).waitFor({ state: 'detached' });
    await poll(() => page.getByRole('button', { name: /^Preview log-05/ }).count()).toBe(5);
    await pager.waitFor({ state: 'detached' });

    // --- Usage -----------------------------------------------------------------
    await page.getByRole('link', { name: 'Usage' }).click();
    await page.waitForURL('**/usage');
    await page.getByRole('progressbar', { name: 'Storage used' }).waitFor();
    const me = (await (await page.request.get('/api/auth/me')).json()) as { data: { rate_limit_per_minute: number } };
    await page.getByText(`${me.data.rate_limit_per_minute.toLocaleString('en-US')} requests per minute`).waitFor();
    await page.getByRole('list', { name: 'Size of each bucket' }).getByRole('link', { name: 'photos' }).waitFor();
    await page.getByRole('list', { name: 'Size of each bucket' }).getByRole('link', { name: 'archive' }).waitFor();
    await shoot(page, '10-usage');
    expect((await page.request.delete(`/api/buckets/${archiveId}`, { headers: api })).status()).toBe(200);

    // --- SDK page: create a key, use it, revoke it -----------------------------
    await page.getByRole('link', { name: 'SDK' }).click();
    await page.waitForURL('**/sdk');
    await page.getByText('No API keys yet').waitFor();
    await page.getByLabel('Key name').fill('e2e script');
    await page.getByRole('button', { name: 'Create API key' }).click();
    const key = (await page.getByTestId('new-api-key').textContent())?.trim() ?? '';
    expect(key.length).toBeGreaterThan(16);
    await page.getByText('It will not be shown again').waitFor();
    await page.getByRole('row', { name: /e2e script/ }).waitFor();
    const curl = (await page.getByLabel('curl example', { exact: true }).textContent()) ?? '';
    expect(curl).toContain(`${server.url}/api/v1/buckets/${bucketId}/files/hello.txt`);
    expect(curl).toContain(key);
    await page.getByRole('tab', { name: 'TypeScript SDK' }).click();
    expect(await page.getByLabel('TypeScript SDK example', { exact: true }).textContent()).toContain("import { Pail } from '@pail/sdk'");
    await page.getByRole('tab', { name: 'TypeScript SDK' }).press('ArrowRight');
    expect(await page.getByRole('tab', { name: 'fetch' }).getAttribute('aria-selected')).toBe('true');
    await shoot(page, '11-sdk');

    const withKey = () => fetch(`${server.url}/api/v1/buckets`, { headers: { 'x-api-key': key } });
    const before = await withKey();
    expect(before.status).toBe(200);
    expect(JSON.stringify(await before.json())).toContain('"photos"');

    await page.getByRole('button', { name: 'Revoke key e2e script' }).click();
    const revokeDialog = page.getByRole('dialog', { name: 'Revoke key “e2e script”?' });
    await revokeDialog.getByRole('button', { name: 'Revoke key' }).click();
    await revokeDialog.waitFor({ state: 'hidden' });
    await page.getByText('No API keys yet').waitFor();
    expect((await withKey()).status).toBe(401);

    // --- The storage cap stops an upload, with a clear message ----------------
    await page.goto(bucketPath);
    await page.getByRole('button', { name: 'Preview hello.txt' }).waitFor();
    await consoleWatch.allowing([/status of 409/], async () => {
      await page
        .getByLabel('Choose files to upload')
        .setInputFiles([{ name: 'too-big.bin', mimeType: 'application/octet-stream', buffer: randomBytes(STORAGE_CAP + 1000, 3) }]);
      const failed = page.getByRole('listitem', { name: 'too-big.bin' });
      await failed.getByText('Storage limit exceeded').waitFor();
      await failed.getByText('Delete files you no longer need').waitFor();
      // Refused before sending, and a retry could only be refused again: none is offered.
      expect(await failed.getByRole('button', { name: 'Retry upload of too-big.bin' }).count()).toBe(0);
    });
    await poll(() => page.getByTestId('bucket-object-count').textContent()).toBe('3 objects');
    await shoot(page, '12-storage-cap');

    // --- Delete a file ---------------------------------------------------------------
    await page.getByRole('button', { name: 'Delete hello.txt' }).click();
    const deleteFile = page.getByRole('dialog', { name: 'Delete “hello.txt”?' });
    await deleteFile.getByRole('button', { name: 'Delete file' }).click();
    await deleteFile.waitFor({ state: 'hidden' });
    await poll(() => page.getByTestId('bucket-object-count').textContent()).toBe('2 objects');
    await page.getByRole('button', { name: 'Preview hello.txt' }).waitFor({ state: 'detached' });

    // --- Delete the bucket: the confirmation names it and what goes with it ----
    await page.getByRole('button', { name: 'Delete bucket' }).click();
    const deleteBucket = page.getByRole('dialog', { name: 'Delete bucket “photos”?' });
    await deleteBucket.getByText('2 files').waitFor();
    await deleteBucket.getByText('This cannot be undone.').waitFor();
    await deleteBucket.getByLabel('Type photos to confirm').fill('photos');
    await shoot(page, '13-delete-bucket');
    await deleteBucket.getByRole('button', { name: 'Delete bucket' }).click();
    await page.waitForURL('**/buckets');
    await page.getByText('No buckets yet').waitFor();
    expect((await fetch(fileUrl)).status).not.toBe(200);

    // --- Log out, a wrong password, log in again -------------------------------
    await page.getByRole('button', { name: /Account menu/ }).click();
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.waitForURL('**/login');
    await consoleWatch.allowing([/status of 401/], async () => {
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill('not the password');
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.getByText('Invalid email or password').waitFor();
    });
    await shoot(page, '14-login-error');
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL('**/buckets');

    // The keyboard: on a fresh load the first Tab reaches the skip link, which moves focus to the content.
    await page.reload();
    await page.getByRole('heading', { name: 'Buckets', exact: true }).waitFor();
    await page.keyboard.press('Tab');
    const skip = page.getByRole('link', { name: 'Skip to content' });
    expect(await skip.evaluate((el) => el === document.activeElement)).toBe(true);
    await page.keyboard.press('Enter');
    await poll(() => page.evaluate(() => document.activeElement?.id)).toBe('main');

    // The dark theme, for the record.
    await page.emulateMedia({ colorScheme: 'dark' });
    await shoot(page, '15-buckets-dark');
    await page.emulateMedia({ colorScheme: 'light' });

    // A bucket that does not exist (or was deleted) gets a clear error state.
    await consoleWatch.allowing([/status of 404/], async () => {
      await page.goto(bucketPath);
      await page.getByText('Bucket not found').waitFor();
      await page.getByRole('link', { name: 'All buckets' }).waitFor();
    });

    // Unknown pages get the app's own not-found page.
    await page.goto('/no/such/page');
    await page.getByText('This page does not exist').waitFor();
  }
});

describe.skipIf(skipBrowserSuites)('dashboard messages for closed sign-up and the file-size cap (end to end, Chromium)', () => {
  let closedServer: TestServer;
  let smallFilesServer: TestServer;
  let browser: Browser;
  /** Closed by each test, and here whatever a failed test left open (each page has a context of its own). */
  const pages: Page[] = [];
  const openPage = async (baseURL: string) => {
    const page = await browser.newPage({ baseURL, viewport: DESKTOP });
    pages.push(page);
    return page;
  };

  beforeAll(async () => {
    const dashboard = await buildDashboard();
    [closedServer, smallFilesServer] = await Promise.all([
      startTestServer({ env: { DASHBOARD_DIR: dashboard, SIGNUP: 'closed' } }),
      startTestServer({ env: { DASHBOARD_DIR: dashboard, MAX_FILE_BYTES: '1000' } }),
    ]);
    browser = await sharedBrowser();
  }, 120_000);

  afterAll(async () => {
    for (const page of pages) await page.close().catch(() => {});
    await closedServer?.close();
    await smallFilesServer?.close();
  });

  it('says clearly that sign-up is closed', async () => {
    const page = await openPage(closedServer.url);
    page.setDefaultTimeout(STEP_TIMEOUT);
    const watch = new ConsoleWatch();
    watch.attach(page);
    await page.goto('/signup');
    await watch.allowing([/status of 403/], async () => {
      await page.getByLabel('Email').fill('someone@example.com');
      await page.getByLabel('Password').fill('long enough password');
      await page.getByRole('button', { name: 'Sign up' }).click();
      await page.getByText('Sign-up is closed on this server').waitFor();
    });
    expect(page.url()).toMatch(/\/signup$/);
    expect(watch.errors).toEqual([]);
    await page.close();
  }, 60_000);

  it('says clearly when a file is over the single-file cap, and uploads the others', async () => {
    const page = await openPage(smallFilesServer.url);
    page.setDefaultTimeout(STEP_TIMEOUT);
    const watch = new ConsoleWatch();
    watch.attach(page);
    await page.goto('/signup');
    await page.getByLabel('Email').fill('small@example.com');
    await page.getByLabel('Password').fill('long enough password');
    await page.getByRole('button', { name: 'Sign up' }).click();
    await page.waitForURL('**/buckets');
    await page.getByRole('button', { name: 'New bucket' }).first().click();
    await page.getByLabel('Bucket name').fill('docs');
    await page.getByRole('button', { name: 'Create bucket' }).click();
    await page.waitForURL(/\/buckets\/\d+$/);
    await watch.allowing([/status of 413/], async () => {
      await page.getByLabel('Choose files to upload').setInputFiles([
        { name: 'small.txt', mimeType: 'text/plain', buffer: Buffer.from('fits') },
        { name: 'large.bin', mimeType: 'application/octet-stream', buffer: randomBytes(5000, 1) },
      ]);
      const failed = page.getByRole('listitem', { name: 'large.bin' });
      await failed.getByText('File too large').waitFor();
      await failed.getByText('larger than the server allows for a single file').waitFor();
    });
    await page.getByRole('heading', { name: 'Uploads (1 of 2 done)' }).waitFor();
    await poll(() => page.getByTestId('bucket-object-count').textContent()).toBe('1 object');

    // Drag and drop onto the file area.
    const dropped = await page.evaluateHandle(() => {
      const transfer = new DataTransfer();
      transfer.items.add(new File(['dropped!'], 'dropped.txt', { type: 'text/plain' }));
      return transfer;
    });
    await page.dispatchEvent('.dropzone', 'dragenter', { dataTransfer: dropped });
    await page.getByText('Drop to upload to docs').waitFor();
    await page.dispatchEvent('.dropzone', 'drop', { dataTransfer: dropped });
    await page.getByRole('heading', { name: 'Uploads (2 of 3 done)' }).waitFor();
    await poll(() => page.getByTestId('bucket-object-count').textContent()).toBe('2 objects');

    // Cancel: the server's answer for this one is held back until the test is done, so it is still running when cancelled.
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route('**/api/buckets/*/files/slow.txt', async (route) => {
      await held;
      await route.continue().catch(() => {});
    });
    await page.getByLabel('Choose files to upload').setInputFiles([{ name: 'slow.txt', mimeType: 'text/plain', buffer: Buffer.from('slow') }]);
    await page.getByRole('button', { name: 'Cancel upload of slow.txt' }).click();
    const cancelled = page.getByRole('listitem', { name: 'slow.txt' });
    await cancelled.getByText('Cancelled').waitFor();
    await cancelled.getByRole('button', { name: 'Retry upload of slow.txt' }).waitFor();
    await page.getByRole('button', { name: 'Clear finished' }).click();
    await page.getByRole('list', { name: 'Upload progress' }).waitFor({ state: 'detached' });
    await poll(() => page.getByTestId('bucket-object-count').textContent()).toBe('2 objects');
    release();
    await page.unrouteAll({ behavior: 'ignoreErrors' });
    expect(watch.errors).toEqual([]);
    await page.close();
  }, 60_000);
});
