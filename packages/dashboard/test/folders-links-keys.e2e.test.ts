/**
 * Folders, share links and API keys with limits in the dashboard, end to end:
 * a real Pail server serving the built dashboard, driven by headless Chromium.
 * What the page did is checked against the server through the API, and share
 * links and limited keys are used from outside the signed-in page: a fresh
 * browser context without a session, and plain fetch with the key.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer } from '../../server/test/helpers/server.js';
import { buildDashboard, ConsoleWatch, DESKTOP, poll, screenshotDir, sharedBrowser, shoot, skipBrowserSuites, STEP_TIMEOUT } from './e2e-helpers.js';

type TestServer = Awaited<ReturnType<typeof startTestServer>>;

interface Listed {
  data: { filename: string; size: number }[];
  folders: string[];
}

describe.skipIf(skipBrowserSuites)('dashboard folders, share links and keys with limits (end to end, Chromium)', () => {
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
    async list(bucketId: number, query = ''): Promise<Listed> {
      const res = await page.request.get(`/api/buckets/${bucketId}/files${query}`);
      expect(res.status()).toBe(200);
      return (await res.json()) as Listed;
    },
    async names(bucketId: number): Promise<string[]> {
      return (await api.list(bucketId)).data.map((f) => f.filename);
    },
  };

  beforeAll(async () => {
    const dashboard = await buildDashboard();
    await mkdir(screenshotDir, { recursive: true });
    server = await startTestServer({ env: { DASHBOARD_DIR: dashboard } });
    sameOrigin = { origin: server.url };
    browser = await sharedBrowser();
    context = await browser.newContext({ viewport: DESKTOP, baseURL: server.url, permissions: ['clipboard-read', 'clipboard-write'] });
    page = await context.newPage();
    page.setDefaultTimeout(STEP_TIMEOUT);
    consoleWatch.attach(page);

    await page.goto('/signup');
    await page.getByLabel('Email').fill(`folders-${Date.now()}@example.com`);
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

  it('makes a folder, opens it, uploads into it and finds the way back with the breadcrumbs', async () => {
    await step('folders', async () => {
      const bucketId = await api.createBucket('projects');
      await page.goto(`/buckets/${bucketId}`);
      await page.getByText('This bucket is empty').waitFor();
      const crumbs = page.getByRole('navigation', { name: 'Folder path' });

      // "New folder" checks the name with the shared rule, then makes an empty marker object.
      await page.getByRole('button', { name: 'New folder' }).click();
      const dialog = page.getByRole('dialog', { name: 'New folder' });
      await dialog.getByLabel('Folder name').fill('a//b');
      await dialog.getByText('empty folder name').waitFor();
      await dialog.getByLabel('Folder name').fill('..');
      await dialog.getByText('must not contain . or ..').waitFor();
      await dialog.getByLabel('Folder name').fill('reports');
      await dialog.getByRole('button', { name: 'Create folder' }).click();
      await dialog.waitFor({ state: 'hidden' });
      await page.getByText('Folder reports created').waitFor();
      const marker = (await api.list(bucketId)).data.find((f) => f.filename === 'reports/');
      expect(marker?.size).toBe(0);
      // It opens, as a file manager's new folder does: the folder is in the URL, and it is empty.
      await page.waitForURL(`**/buckets/${bucketId}?folder=reports%2F`);
      await shoot(page, '20-folder-made');
      await page.getByText('This folder is empty').waitFor();
      expect(await crumbs.locator('[aria-current]').textContent()).toBe('reports');

      // Upload into it: the stored name is the folder's path and the file's name.
      const q1 = 'first quarter\n';
      await page.getByLabel('Choose files to upload').setInputFiles([{ name: 'q1.txt', mimeType: 'text/plain', buffer: Buffer.from(q1) }]);
      await page.getByRole('heading', { name: 'Uploads (1 of 1 done)' }).waitFor();
      await page.getByRole('button', { name: 'Preview q1.txt' }).waitFor();
      await poll(() => api.names(bucketId)).toEqual(['reports/', 'reports/q1.txt']);
      const download = await page.request.get(`/api/buckets/${bucketId}/files/reports/q1.txt`);
      expect(await download.text()).toBe(q1);
      await page.getByRole('button', { name: 'Clear finished' }).click();

      // A folder inside the folder, and a file in it, by name only (relative to where you are).
      await page.getByRole('button', { name: 'New folder' }).click();
      await dialog.getByLabel('Folder name').fill('2026');
      await dialog.getByRole('button', { name: 'Create folder' }).click();
      await page.waitForURL(`**/buckets/${bucketId}?folder=reports%2F2026%2F`);
      await page.getByText('This folder is empty').waitFor();
      await page.getByLabel('Choose files to upload').setInputFiles([{ name: 'plan b.txt', mimeType: 'text/plain', buffer: Buffer.from('plan\n') }]);
      await page.getByRole('button', { name: 'Preview plan b.txt' }).waitFor();
      await poll(() => api.names(bucketId)).toEqual(['reports/', 'reports/2026/', 'reports/2026/plan b.txt', 'reports/q1.txt']);
      expect(await crumbs.getByRole('link').allTextContents()).toEqual(['projects', 'reports']);
      await shoot(page, '21-folder-nested');

      // Breadcrumbs lead back, one level and then to the top of the bucket; so does the browser's back button.
      await crumbs.getByRole('link', { name: 'reports' }).click();
      await page.waitForURL(`**/buckets/${bucketId}?folder=reports%2F`);
      await page.getByRole('link', { name: 'Open folder 2026' }).waitFor();
      await page.getByRole('button', { name: 'Preview q1.txt' }).waitFor();
      await crumbs.getByRole('link', { name: 'projects' }).click();
      await page.waitForURL(`**/buckets/${bucketId}`);
      await page.getByRole('link', { name: 'Open folder reports' }).waitFor();
      await page.getByRole('button', { name: 'Preview q1.txt' }).waitFor({ state: 'detached' });
      expect(await crumbs.getByRole('link').count()).toBe(0);
      await page.goBack();
      await page.getByRole('button', { name: 'Preview q1.txt' }).waitFor();

      // Deleting files whose names have slashes, one of them ending in "delete" (the delete alias on the Developer API).
      await api.put(bucketId, 'reports/delete', 'not an alias\n');
      await page.reload();
      await page.getByRole('button', { name: 'Delete delete', exact: true }).click();
      const confirmAlias = page.getByRole('dialog', { name: 'Delete “reports/delete”?' });
      await confirmAlias.getByRole('button', { name: 'Delete file' }).click();
      await confirmAlias.waitFor({ state: 'hidden' });
      await page.getByRole('button', { name: 'Delete q1.txt' }).click();
      const confirm = page.getByRole('dialog', { name: 'Delete “reports/q1.txt”?' });
      await confirm.getByRole('button', { name: 'Delete file' }).click();
      await confirm.waitFor({ state: 'hidden' });
      await page.getByRole('button', { name: 'Preview q1.txt' }).waitFor({ state: 'detached' });
      await poll(() => api.names(bucketId)).toEqual(['reports/', 'reports/2026/', 'reports/2026/plan b.txt']);
    });
  }, 120_000);

  it('pages through a folder of folders and files with the cursor', async () => {
    await step('folder-paging', async () => {
      const bucketId = await api.createBucket('paging');
      // 53 files and 2 folders directly under logs/: 55 entries, two pages of 50.
      const puts = Array.from({ length: 53 }, (_, i) => api.put(bucketId, `logs/entry-${String(i).padStart(3, '0')}.txt`, `entry ${i}\n`));
      await Promise.all([...puts, api.put(bucketId, 'logs/a-old/x.txt', 'x'), api.put(bucketId, 'logs/b-older/y.txt', 'y')]);
      await page.goto(`/buckets/${bucketId}?folder=logs%2F`);
      const pager = page.getByRole('navigation', { name: 'File pages' });
      await pager.getByText('Page 1 · items 1–50').waitFor();
      await page.getByRole('link', { name: 'Open folder a-old' }).waitFor();
      await page.getByRole('button', { name: 'Preview entry-047.txt' }).waitFor();
      await pager.getByRole('button', { name: 'Next' }).click();
      await pager.getByText('Page 2 · files 51–55').waitFor();
      await page.getByRole('button', { name: 'Preview entry-052.txt' }).waitFor();
      await page.getByRole('link', { name: 'Open folder a-old' }).waitFor({ state: 'detached' });
      expect(await pager.getByRole('button', { name: 'Next' }).isDisabled()).toBe(true);
      await pager.getByRole('button', { name: 'Previous' }).click();
      await page.getByRole('link', { name: 'Open folder b-older' }).waitFor();

      // Search stays inside the folder (and the folders under it).
      await page.getByLabel('Search files by name').fill('entry-05');
      await poll(() => page.getByRole('button', { name: /^Preview entry-05/ }).count()).toBe(3);
      await page.getByRole('link', { name: 'Open folder a-old' }).waitFor({ state: 'detached' });
    });
  }, 120_000);

  it('shares a file with a link that downloads it in a fresh browser without a session', async () => {
    await step('share', async () => {
      const bucketId = await api.createBucket('shared');
      const contents = 'the minutes of the meeting\n';
      await api.put(bucketId, 'minutes/2026-05.txt', contents);
      await page.goto(`/buckets/${bucketId}?folder=minutes%2F`);

      await page.getByRole('button', { name: 'Share 2026-05.txt' }).click();
      const dialog = page.getByRole('dialog', { name: 'Share “minutes/2026-05.txt”' });
      expect(await dialog.getByRole('radio', { name: 'A day' }).isChecked()).toBe(true);

      // Custom lifetimes are held to what the server signs: 1 second to 7 days.
      await dialog.getByText('Custom', { exact: true }).click();
      await dialog.getByLabel('Hours', { exact: true }).fill('200');
      await dialog.getByText('from 1 second to 7 days').waitFor();
      expect(await dialog.getByRole('button', { name: 'Create link' }).isDisabled()).toBe(true);
      await dialog.getByLabel('Hours', { exact: true }).fill('2');
      const [request] = await Promise.all([
        page.waitForRequest((r) => r.url().endsWith('/signed-url')),
        dialog.getByRole('button', { name: 'Create link' }).click(),
      ]);
      expect(request.postDataJSON()).toEqual({ method: 'GET', expires_in: 7200 });
      const urlBox = dialog.getByRole('textbox', { name: 'Share link' });
      await urlBox.waitFor();
      const url = await urlBox.inputValue();
      expect(url).toMatch(new RegExp(`^${server.url}/storage/[^/]+/minutes/2026-05\\.txt\\?X-Pail-Expires=`));
      expect(await urlBox.getAttribute('readonly')).not.toBeNull();
      await poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(url);
      await dialog.getByText('Copied to the clipboard.').waitFor();
      await shoot(page, '22-share-link');

      // The link in a fresh browser: no cookies, no session, and still the file's bytes.
      const stranger = await browser.newContext();
      try {
        expect(await stranger.cookies()).toEqual([]);
        const strangerPage = await stranger.newPage();
        const response = await strangerPage.goto(url);
        expect(response?.status()).toBe(200);
        expect((await response?.body())?.toString()).toBe(contents);
        // The same file without the signature is private.
        expect((await stranger.request.get(url.split('?')[0] ?? '')).status()).toBe(401);
      } finally {
        await stranger.close();
      }

      // "Until a date": the lifetime is measured from the click.
      await dialog.getByText('Until a date', { exact: true }).click();
      const inThreeHours = new Date(Date.now() + 3 * 3600_000);
      const pad = (n: number) => String(n).padStart(2, '0');
      const local = `${inThreeHours.getFullYear()}-${pad(inThreeHours.getMonth() + 1)}-${pad(inThreeHours.getDate())}T${pad(inThreeHours.getHours())}:${pad(inThreeHours.getMinutes())}`;
      await dialog.getByLabel('Expires at').fill(local);
      const [byDate] = await Promise.all([
        page.waitForRequest((r) => r.url().endsWith('/signed-url')),
        dialog.getByRole('button', { name: 'Create a new link' }).click(),
      ]);
      const seconds = (byDate.postDataJSON() as { expires_in: number }).expires_in;
      expect(seconds).toBeGreaterThan(3 * 3600 - 120);
      expect(seconds).toBeLessThanOrEqual(3 * 3600);
      await dialog.getByRole('button', { name: 'Done' }).click();
      await dialog.waitFor({ state: 'hidden' });
    });
  }, 120_000);

  it('creates a key limited to one bucket and to reading, shows its limits, and the server holds it to them', async () => {
    await step('keys', async () => {
      const mineId = await api.createBucket('readable');
      const otherId = await api.createBucket('elsewhere');
      await api.put(mineId, 'hello.txt', 'hello\n');
      await page.goto('/sdk');
      await page.getByText('No API keys yet').waitFor();

      const form = page.getByRole('form', { name: 'Create an API key' });
      await form.getByLabel('Key name').fill('read only');
      await form.getByRole('group', { name: 'Buckets' }).getByRole('checkbox', { name: 'readable' }).check();
      const permissions = form.getByRole('group', { name: 'Permissions' });
      for (const permission of ['read', 'write', 'delete', 'manage'])
        expect(await permissions.getByRole('checkbox', { name: permission }).isChecked()).toBe(true);
      for (const permission of ['write', 'delete', 'manage']) await permissions.getByRole('checkbox', { name: permission }).uncheck();
      await permissions.getByRole('checkbox', { name: 'read' }).uncheck();
      await permissions.getByText('Pick at least one permission.').waitFor();
      await permissions.getByRole('checkbox', { name: 'read' }).check();
      await form.getByRole('group', { name: 'Expires' }).getByRole('radio', { name: 'After a number of days' }).check();
      await form.getByLabel('Days until the key expires').fill('7');
      const [request] = await Promise.all([
        page.waitForRequest((r) => r.url().endsWith('/api/keys') && r.method() === 'POST'),
        form.getByRole('button', { name: 'Create API key' }).click(),
      ]);
      expect(request.postDataJSON()).toEqual({ name: 'read only', buckets: [mineId], permissions: ['read'], expires_in: 7 * 86400 });
      const key = (await page.getByTestId('new-api-key').textContent())?.trim() ?? '';
      expect(key.length).toBeGreaterThan(16);
      // Its S3 credential, shown once beside it.
      expect((await page.getByTestId('new-access-key-id').textContent())?.trim()).toMatch(/^[A-Z2-7]{20}$/);
      expect((await page.getByTestId('new-secret-access-key').textContent())?.trim()).toMatch(/^[A-Za-z0-9_-]{40}$/);

      // The list shows the limits, and they survive a reload (they come from the server).
      await page.reload();
      const row = page.getByRole('row', { name: /read only/ });
      await row.getByRole('cell', { name: 'readable', exact: true }).waitFor();
      await row.getByRole('cell', { name: 'read', exact: true }).waitFor();
      expect(await row.getByRole('cell', { name: 'Never' }).count()).toBe(1); // last used, not the expiry
      const listed = (await (await page.request.get('/api/keys')).json()) as { data: { name: string; expires_at: string | null }[] };
      const expiresAt = Date.parse(listed.data.find((k) => k.name === 'read only')?.expires_at ?? '');
      expect(Math.abs(expiresAt - (Date.now() + 7 * 86400_000))).toBeLessThan(120_000);

      // A key without limits, for contrast.
      await page.getByLabel('Key name').fill('everything');
      await page.getByRole('button', { name: 'Create API key' }).click();
      const full = page.getByRole('row', { name: /everything/ });
      await full.getByRole('cell', { name: 'All buckets' }).waitFor();
      await full.getByRole('cell', { name: 'All: read, write, delete, manage' }).waitFor();
      await shoot(page, '23-keys-with-limits');

      // The server holds the key to its limits.
      const headers = { 'x-api-key': key };
      const read = await fetch(`${server.url}/api/v1/buckets/${mineId}/files/hello.txt`, { headers });
      expect(read.status).toBe(200);
      expect(await read.text()).toBe('hello\n');
      const upload = await fetch(`${server.url}/api/v1/buckets/${mineId}/files/new.txt`, {
        method: 'PUT',
        headers: { ...headers, 'content-type': 'text/plain' },
        body: 'nope',
      });
      expect(upload.status).toBe(403);
      expect(((await upload.json()) as { error: string }).error).toBe('This API key does not allow write');
      const other = await fetch(`${server.url}/api/v1/buckets/${otherId}/files`, { headers });
      expect(other.status).toBe(404);
      const buckets = (await (await fetch(`${server.url}/api/v1/buckets`, { headers })).json()) as { data: { name: string }[] };
      expect(buckets.data.map((b) => b.name)).toEqual(['readable']);
    });
  }, 120_000);
});
