/**
 * Browser uploads through the S3 API (issue 24) from a real browser: a page
 * served from another origin posts a presigned POST form with fetch, as an
 * app would, and reads the answer as bucket CORS lets it; and the README's
 * example (examples/presigned-post) does the same for the image chosen in its
 * page. The server's side of these requests (presigned POST, CORS rules and
 * headers) is tested on every backend in s3-browser-uploads.test.ts.
 */
import { GetObjectCommand, PutBucketCorsCommand, type S3Client, CreateBucketCommand } from '@aws-sdk/client-s3';
import { createPresignedPost } from '@aws-sdk/s3-presigned-post';
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, sharedBrowser } from './helpers/chromium.js';
import { signUp, type TestUser } from './helpers/client.js';
import { sdkClient } from './helpers/s3-client.js';
import { freePort, startTestServer, type TestServer } from './helpers/server.js';

const EXAMPLE = fileURLToPath(new URL('../../../examples/presigned-post/server.mjs', import.meta.url));

describe.skipIf(!hasChromium)('in Chromium', () => {
  let server: TestServer;
  let s3Url: string;
  let alice: TestUser;
  let s3: S3Client;
  let browser: Browser;
  let context: BrowserContext | undefined;
  let page: Server | undefined;

  beforeAll(async () => {
    server = await startTestServer({ s3: true });
    if (server.s3Url === null) throw new Error('the S3 listener did not start');
    s3Url = server.s3Url;
    alice = await signUp(server.url);
    s3 = sdkClient(s3Url, alice);
    browser = await sharedBrowser();
  });
  afterEach(async () => {
    await context?.close();
    context = undefined;
  });
  afterAll(async () => {
    await new Promise<void>((done) => (page ? page.close(() => done()) : done()));
    await server?.close();
  });

  let bucketCount = 0;
  async function newBucket(): Promise<string> {
    const name = `post-test-${++bucketCount}-${Date.now().toString(36)}`;
    await s3.send(new CreateBucketCommand({ Bucket: name }));
    return name;
  }

  it('a page on another origin uploads with a presigned POST and reads the answer (CORS)', async () => {
    const bucket = await newBucket();
    let html = '';
    page = createServer((_request, response) => response.writeHead(200, { 'content-type': 'text/html' }).end(html));
    await new Promise<void>((done) => page!.listen(0, '127.0.0.1', done));
    const origin = `http://127.0.0.1:${(page.address() as AddressInfo).port}`;
    await s3.send(
      new PutBucketCorsCommand({
        Bucket: bucket,
        CORSConfiguration: { CORSRules: [{ AllowedOrigins: [origin], AllowedMethods: ['POST'], ExposeHeaders: ['ETag'] }] },
      }),
    );
    const signed = await createPresignedPost(s3, { Bucket: bucket, Key: 'browser/${filename}', Conditions: [['content-length-range', 1, 1024]] });
    html = `<!doctype html><script>
      window.upload = async () => {
        const { url, fields } = ${JSON.stringify(signed)};
        const form = new FormData();
        for (const [name, value] of Object.entries(fields)) form.append(name, value);
        form.append('file', new Blob(['from chromium']), 'note.txt');
        const response = await fetch(url, { method: 'POST', body: form });
        return { status: response.status, etag: response.headers.get('etag') };
      };
    </script>`;
    context = await browser.newContext();
    const tab = await context.newPage();
    await tab.goto(origin);
    const result = await tab.evaluate(() => (window as unknown as { upload: () => Promise<{ status: number; etag: string | null }> }).upload());
    expect(result).toEqual({ status: 204, etag: `"${createHash('md5').update('from chromium').digest('hex')}"` });
    const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'browser/note.txt' }));
    expect(await got.Body?.transformToString()).toBe('from chromium');
  }, 60_000);

  it("the README's example (examples/presigned-post) uploads the image chosen in its page, and refuses other files", async () => {
    const bucket = await newBucket();
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    const example = spawn(process.execPath, [EXAMPLE], {
      env: {
        PATH: process.env.PATH,
        PAIL_S3_ENDPOINT: s3Url,
        PAIL_ACCESS_KEY_ID: alice.accessKeyId,
        PAIL_SECRET_ACCESS_KEY: alice.secretAccessKey,
        BUCKET: bucket,
        PORT: String(port),
        ORIGIN: origin,
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      await new Promise<void>((ready, failed) => {
        example.stdout.setEncoding('utf8').on('data', (text: string) => text.includes('open http') && ready());
        example.on('exit', (code) => failed(new Error(`the example server exited (${code})`)));
      });
      const image = randomBytes(50_000);
      context = await browser.newContext();
      const tab = await context.newPage();
      await tab.goto(origin);
      await tab.setInputFiles('#file', { name: 'cat.png', mimeType: 'image/png', buffer: image });
      await tab.waitForFunction(() => !document.getElementById('status')!.textContent.startsWith('Uploading'));
      expect(await tab.textContent('#status')).toBe(`Uploaded cat.png: 204, ETag "${createHash('md5').update(image).digest('hex')}"`);
      const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'uploads/cat.png' }));
      expect(got.ContentType).toBe('image/png');
      expect(Buffer.from(await got.Body!.transformToByteArray()).equals(image)).toBe(true);

      await tab.setInputFiles('#file', { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('not an image') });
      await tab.waitForFunction(() => !document.getElementById('status')!.textContent.startsWith('Uploading'));
      expect(await tab.textContent('#status')).toBe('Not signed: images only');
    } finally {
      example.kill();
    }
  }, 60_000);
});
