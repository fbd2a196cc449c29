/**
 * Webhooks and the audit log in the dashboard (issue 39), end to end in
 * Chromium against a real server and a real receiver: a webhook added from a
 * bucket's page shows its secret once, the receiver gets a signed event that
 * verifies with that secret, the deliveries list shows it and resends it, the
 * webhook is disabled, and the audit log page lists what was done.
 */
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordOf, startReceiver, verify, type Receiver } from '../../server/test/helpers/webhook-receiver.js';
import { ConsoleWatch, poll, runStep, signedInDashboard, skipBrowserSuites, type DashboardServer } from './e2e-helpers.js';

describe.skipIf(skipBrowserSuites)('dashboard webhooks and audit log (end to end, Chromium)', () => {
  let server: DashboardServer;
  let context: BrowserContext;
  let page: Page;
  let receiver: Receiver;
  let sameOrigin: { origin: string };
  const watch = new ConsoleWatch();

  beforeAll(async () => {
    receiver = await startReceiver();
    ({ server, context, page, sameOrigin } = await signedInDashboard('webhooks', watch, undefined, { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_POLL_MS: '50' }));
  }, 120_000);
  afterAll(async () => {
    await context?.close();
    await server?.close();
    await receiver?.close();
  });

  it('adds a webhook, shows its secret once, lists and resends its delivery, disables it; the audit log shows it all', async () => {
    const created = await page.request.post('/api/buckets', { data: { name: 'hooked' }, headers: sameOrigin });
    expect(created.status()).toBe(201);
    const bucketId = ((await created.json()) as { data: { id: number } }).data.id;
    let secret = '';

    await runStep(page, watch, 'webhooks-add', async () => {
      await page.goto(`/buckets/${bucketId}`);
      await page.getByRole('link', { name: 'Webhooks' }).click();
      await page.waitForURL(`**/buckets/${bucketId}/webhooks`);
      await page.getByLabel('Endpoint url').fill(receiver.url);
      await page.getByRole('button', { name: 'Add webhook' }).click();
      const shown = page.getByTestId('webhook-secret');
      secret = (await shown.locator('code.secret').textContent()) ?? '';
      expect(secret).toMatch(/^whsec_/);
      await poll(() => page.getByTestId('webhook').count()).toBe(1);
      await page.getByRole('button', { name: 'Done' }).click();
      await poll(() => page.getByTestId('webhook-secret').count()).toBe(0);
    });

    await runStep(page, watch, 'webhooks-deliver', async () => {
      const upload = await page.request.put(`/api/buckets/${bucketId}/files/photo.txt`, {
        data: 'hello',
        headers: { ...sameOrigin, 'content-type': 'text/plain' },
      });
      expect(upload.status()).toBe(201);
      await receiver.waitFor((received) => received.length >= 1, 'the event');
      expect(recordOf(receiver.received[0]!).s3.object!.key).toBe('photo.txt');
      expect(() => verify(secret, receiver.received[0]!)).not.toThrow();
      await poll(async () => {
        await page.reload();
        await page.getByRole('button', { name: 'Deliveries' }).click();
        return page.getByTestId('deliveries').getByRole('cell', { name: 'delivered' }).count();
      }).toBe(1);
      await poll(() => page.getByTestId('deliveries').getByText('s3:ObjectCreated:Put').count()).toBe(1);
      await page.getByRole('button', { name: 'Resend' }).click();
      await receiver.waitFor((received) => received.length >= 2, 'the resent event');
      expect(receiver.received[1]!.headers['webhook-id']).toBe(receiver.received[0]!.headers['webhook-id']);
    });

    await runStep(page, watch, 'webhooks-disable', async () => {
      await page.getByRole('button', { name: 'Disable' }).click();
      await poll(() => page.getByTestId('webhook-status').textContent()).toBe('Disabled');
      await page.getByRole('button', { name: 'Enable' }).waitFor();
    });

    await runStep(page, watch, 'audit-page', async () => {
      await page.getByRole('link', { name: 'Audit log' }).click();
      await page.waitForURL('**/audit');
      const actions = page.getByTestId('audit').locator('tbody tr td[data-label="What"]');
      await poll(() => actions.allTextContents()).toEqual(['webhook.updated', 'webhook.created', 'bucket.created']);
    });
  }, 120_000);
});
