/**
 * Object lock in the dashboard (issue 38, item 3), end to end in Chromium
 * against a real server: a bucket made with object lock and a default
 * COMPLIANCE retention from the create dialog; a file's retention and legal
 * hold seen in its details' Lock tab; the retention extended, never
 * shortened (the server's refusal shown as it says it); the legal hold put on
 * and lifted; deleting the file leaves the locked version, whose removal for
 * good the Pail API refuses until its date. Checked through the API;
 * screenshots go to test-artifacts/screenshots/issue-38/.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConsoleWatch, DESKTOP, PHONE, poll, runStep, signedInDashboard, skipBrowserSuites, type DashboardServer as TestServer } from './e2e-helpers.js';

/** Not committed: the UI as it looks, for people to look at. */
const shotsDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../test-artifacts/screenshots/issue-38');

interface Lock {
  retention: { mode: string; retain_until: string } | null;
  legal_hold: boolean;
}

describe.skipIf(skipBrowserSuites)('dashboard object lock (end to end, Chromium)', () => {
  let server: TestServer;
  let context: BrowserContext;
  let page: Page;
  const consoleWatch = new ConsoleWatch();
  let sameOrigin: { origin: string };
  let bucketId: number;

  const step = (name: string, run: () => Promise<void>) => runStep(page, consoleWatch, `lock-${name}`, run);
  const details = async (): Promise<Lock> => ((await (await page.request.get(`/api/buckets/${bucketId}/details/backup.tar`)).json()) as { data: Lock }).data;

  async function snap(name: string): Promise<void> {
    for (const [size, viewport] of [
      ['desktop', DESKTOP],
      ['phone', PHONE],
    ] as const) {
      await page.setViewportSize(viewport);
      await page.screenshot({ path: path.join(shotsDir, `${name}-${size}.png`), animations: 'disabled' });
    }
    await page.setViewportSize(DESKTOP);
  }

  async function openLock(): Promise<ReturnType<Page['getByRole']>> {
    await page.goto(`/buckets/${bucketId}`);
    await page.getByRole('button', { name: 'More actions for backup.tar', exact: true }).click();
    await page.getByRole('menuitem', { name: 'Details' }).click();
    const panel = page.getByRole('dialog', { name: 'backup.tar' });
    await panel.getByRole('tab', { name: 'Lock' }).click();
    return panel;
  }

  beforeAll(async () => {
    await mkdir(shotsDir, { recursive: true });
    ({ server, context, page, sameOrigin } = await signedInDashboard('lock', consoleWatch));
  }, 120_000);

  afterAll(async () => {
    await context?.close();
    await server?.close();
  });

  it('makes a bucket with object lock and a default retention from the create dialog', async () => {
    await step('create', async () => {
      await page.goto('/buckets');
      await page.getByRole('button', { name: 'New bucket' }).first().click();
      const dialog = page.getByRole('dialog', { name: 'Create a bucket' });
      await dialog.getByLabel('Bucket name').fill('backups');
      await dialog.getByLabel(/Make it a bucket for backups/).check();
      await dialog.getByLabel('New files are kept').selectOption('COMPLIANCE');
      await dialog.getByLabel('Days').fill('0');
      await dialog.getByText('Days: a whole number from 1 to 36,500.').waitFor();
      await dialog.getByLabel('Days').fill('2');
      await snap('01-create-locked-bucket');
      await dialog.getByRole('button', { name: 'Create bucket' }).click();
      await page.waitForURL(/\/buckets\/\d+$/);
      bucketId = Number(new URL(page.url()).pathname.split('/').pop());
      const bucket = ((await (await page.request.get(`/api/buckets/${bucketId}`)).json()) as { data: Record<string, unknown> }).data;
      expect(bucket).toMatchObject({ object_lock: true, versioning: 'enabled', default_retention: { mode: 'COMPLIANCE', days: 2 } });
    });
  }, 120_000);

  it('shows a file’s retention and legal hold, extends the retention but never shortens it, and puts a legal hold on and off', async () => {
    await step('file', async () => {
      const put = await page.request.put(`/api/buckets/${bucketId}/files/backup.tar`, {
        data: 'the backup',
        headers: { ...sameOrigin, 'content-type': 'application/x-tar' },
      });
      expect(put.status()).toBe(201);
      const first = await details();
      expect(first.retention?.mode).toBe('COMPLIANCE');
      const firstUntil = Date.parse(first.retention!.retain_until);
      expect(firstUntil - Date.now()).toBeGreaterThan(86_400_000);

      const panel = await openLock();
      await poll(() => panel.getByTestId('lock-retention').textContent()).toMatch(/^Compliance until /);
      await poll(() => panel.getByTestId('lock-legal-hold').textContent()).toBe('Off');
      await snap('02-lock-tab');

      // Earlier than its date: COMPLIANCE never moves earlier, and the page says why.
      await consoleWatch.allowing([/403|409|400/], async () => {
        await panel.getByLabel(/Keep until/).fill(new Date(Date.now() + 86_400_000).toISOString().slice(0, 10));
        await panel.getByRole('button', { name: 'Save retention' }).click();
        await panel.locator('.inline-error').first().waitFor();
      });
      expect(Date.parse((await details()).retention!.retain_until)).toBe(firstUntil);

      // Later: kept to the end of that day.
      const later = new Date(Date.now() + 10 * 86_400_000).toISOString().slice(0, 10);
      await panel.getByLabel(/Keep until/).fill(later);
      await panel.getByRole('button', { name: 'Save retention' }).click();
      await poll(async () => (await details()).retention?.retain_until).toBe(`${later}T23:59:59.000Z`);

      await panel.getByRole('switch', { name: 'Legal hold' }).click();
      await poll(async () => (await details()).legal_hold).toBe(true);
      await poll(() => panel.getByTestId('lock-legal-hold').textContent()).toMatch(/^On/);
      await snap('03-legal-hold-on');
      await panel.getByRole('switch', { name: 'Legal hold' }).click();
      await poll(async () => (await details()).legal_hold).toBe(false);
    });
  }, 120_000);

  it('deleting the file keeps the locked version, which nobody removes before its date', async () => {
    await step('delete', async () => {
      await page.goto(`/buckets/${bucketId}`);
      await page.getByRole('button', { name: 'Delete backup.tar', exact: true }).click();
      await page.getByRole('dialog', { name: 'Delete “backup.tar”?' }).getByRole('button', { name: 'Delete file' }).click();
      await poll(async () => (await page.request.get(`/api/buckets/${bucketId}/files/backup.tar`)).status()).toBe(404);
      const versions = (
        (await (await page.request.get(`/api/buckets/${bucketId}/files/backup.tar/versions`)).json()) as {
          data: { version_id: string; is_delete_marker: boolean }[];
        }
      ).data;
      const locked = versions.find((version) => !version.is_delete_marker)!;
      const removal = await page.request.delete(`/api/buckets/${bucketId}/files/backup.tar?version_id=${locked.version_id}`, { headers: sameOrigin });
      expect(removal.status()).toBe(403);
      expect(((await removal.json()) as { error: string }).error).toMatch(/until/);
    });
  }, 120_000);
});
