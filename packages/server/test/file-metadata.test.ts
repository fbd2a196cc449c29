/**
 * A file's details and their edit (issue 36, item 8): what S3 stored is
 * shown, an edit replaces the user metadata and keeps the bytes, and the S3
 * door answers HEAD with the edit.
 */
import { HeadObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { devApi, json, signUp, type TestUser } from './helpers/client.js';
import { sdkClient } from './helpers/s3-client.js';
import { startTestServer, type TestServer } from './helpers/server.js';

let server: TestServer;
let user: TestUser;
let api: ReturnType<typeof devApi>;
let s3: S3Client;
let bucketId: number;
const BUCKET = 'meta-files';

const patch = (name: string, body: unknown) => api(`/${bucketId}/files/${name}`, { method: 'PATCH', body: JSON.stringify(body) });
const details = async (name: string) => {
  const response = await api(`/${bucketId}/details/${name}`);
  expect(response.status).toBe(200);
  return (await json(response)).data;
};

beforeAll(async () => {
  server = await startTestServer({ s3: true });
  user = await signUp(server.url);
  api = devApi(server.url, user);
  bucketId = (await json(await api('', { method: 'POST', body: JSON.stringify({ name: BUCKET }) }))).data.id;
  s3 = sdkClient(server.s3Url!, user);
});
afterAll(async () => {
  s3?.destroy();
  await server?.close();
});

describe('file details', () => {
  it('shows size, type, ETag, times, url, and no metadata for a file uploaded through the Pail API', async () => {
    expect((await api(`/${bucketId}/files/docs/plain.txt`, { method: 'PUT', body: 'plain', headers: { 'content-type': 'text/plain' } })).status).toBe(201);
    const head = await api(`/${bucketId}/files/docs/plain.txt`, { method: 'HEAD' });
    const data = await details('docs/plain.txt');
    expect(data).toMatchObject({
      bucket_id: bucketId,
      filename: 'docs/plain.txt',
      size: 5,
      content_type: 'text/plain',
      etag: head.headers.get('etag')!.replaceAll('"', ''),
      metadata: {},
      cache_control: null,
      content_disposition: null,
      content_encoding: null,
      content_language: null,
      expires: null,
    });
    expect(data.url).toMatch(/\/storage\/[^/]+\/docs\/plain\.txt$/);
    expect(Date.parse(data.created_at)).not.toBeNaN();
    expect(Date.parse(data.updated_at)).not.toBeNaN();
  });

  it('shows the x-amz-meta-* and stored headers an S3 PutObject sent', async () => {
    await s3.send(
      new PutObjectCommand({
        Bucket: BUCKET,
        Key: 'from-s3.json',
        Body: '{"a":1}',
        ContentType: 'application/json',
        Metadata: { author: 'ada', 'project-name': 'pail' },
        CacheControl: 'max-age=60',
        ContentDisposition: 'attachment; filename="x.json"',
        ContentLanguage: 'en',
      }),
    );
    expect(await details('from-s3.json')).toMatchObject({
      content_type: 'application/json',
      metadata: { author: 'ada', 'project-name': 'pail' },
      cache_control: 'max-age=60',
      content_disposition: 'attachment; filename="x.json"',
      content_language: 'en',
      content_encoding: null,
      expires: null,
    });
  });

  it('404 for a missing file, a missing bucket and another owner’s bucket; the Client API answers the same', async () => {
    expect((await api(`/${bucketId}/details/nope.txt`)).status).toBe(404);
    expect((await api(`/999999/details/nope.txt`)).status).toBe(404);
    const stranger = await signUp(server.url);
    expect((await devApi(server.url, stranger)(`/${bucketId}/details/from-s3.json`)).status).toBe(404);
    const client = await fetch(`${server.url}/api/buckets/${bucketId}/details/from-s3.json`, { headers: { cookie: user.cookie } });
    expect((await json(client)).data.metadata.author).toBe('ada');
  });
});

describe('metadata edit', () => {
  it('replaces the user metadata, sets type and headers, keeps bytes and ETag; S3 HeadObject sees the edit', async () => {
    const before = await details('from-s3.json');
    const response = await patch('from-s3.json', {
      metadata: { Reviewer: 'grace', stage: 'final' },
      content_type: 'text/plain; charset=utf-8',
      cache_control: 'no-cache',
      content_disposition: null,
      expires: 'Thu, 01 Jan 2032 00:00:00 GMT',
    });
    expect(response.status).toBe(200);
    const edited = (await json(response)).data;
    expect(edited).toMatchObject({
      metadata: { reviewer: 'grace', stage: 'final' },
      content_type: 'text/plain; charset=utf-8',
      cache_control: 'no-cache',
      content_disposition: null,
      content_language: 'en',
      expires: 'Thu, 01 Jan 2032 00:00:00 GMT',
      etag: before.etag,
      size: before.size,
      created_at: before.created_at,
    });
    expect(Date.parse(edited.updated_at)).toBeGreaterThanOrEqual(Date.parse(before.updated_at));
    expect(await details('from-s3.json')).toEqual(edited);

    const head = await s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'from-s3.json' }));
    expect(head.Metadata).toEqual({ reviewer: 'grace', stage: 'final' });
    expect(head.ContentType).toBe('text/plain; charset=utf-8');
    expect(head.CacheControl).toBe('no-cache');
    expect(head.ContentDisposition).toBeUndefined();
    expect(head.ContentLanguage).toBe('en');
    expect(head.ETag).toBe(`"${before.etag}"`);

    const download = await api(`/${bucketId}/files/from-s3.json`);
    expect(download.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(await download.text()).toBe('{"a":1}');
  });

  it('leaves what the body does not name; {} clears the user metadata and null a header', async () => {
    const typeOnly = (await json(await patch('from-s3.json', { content_type: 'application/json' }))).data;
    expect(typeOnly).toMatchObject({ content_type: 'application/json', metadata: { reviewer: 'grace', stage: 'final' }, cache_control: 'no-cache' });
    const cleared = (await json(await patch('from-s3.json', { metadata: {}, cache_control: null }))).data;
    expect(cleared).toMatchObject({ metadata: {}, cache_control: null, content_language: 'en' });
    const head = await s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'from-s3.json' }));
    expect(head.Metadata).toEqual({});
    expect(head.CacheControl).toBeUndefined();
  });

  it('edits a file uploaded through the Pail API, with non-ASCII values, on the Client API with the session', async () => {
    const response = await fetch(`${server.url}/api/buckets/${bucketId}/files/docs/plain.txt`, {
      method: 'PATCH',
      headers: { cookie: user.cookie, origin: server.url, 'content-type': 'application/json' },
      body: JSON.stringify({ metadata: { note: 'café ☕' } }),
    });
    expect(response.status).toBe(200);
    const head = await s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'docs/plain.txt' }));
    // As S3 sends a value past Latin-1: RFC 2047 encoded; the details show it as it is.
    expect(head.Metadata).toEqual({ note: `=?UTF-8?B?${Buffer.from('café ☕').toString('base64')}?=` });
    expect((await details('docs/plain.txt')).metadata).toEqual({ note: 'café ☕' });
  });

  it('refuses more than 2 KiB of metadata, bad names and values, bad types, unknown fields and an empty body (400)', async () => {
    const refusals: [unknown, RegExp][] = [
      [{ metadata: { big: 'x'.repeat(2048) } }, /Metadata too large/],
      [{ metadata: { a: 'x'.repeat(1000), b: 'y'.repeat(1000), c: 'z'.repeat(40) } }, /at most 2048/],
      [{ metadata: { 'bad name': 'x' } }, /Metadata name/],
      [{ metadata: { ok: 'line\nbreak' } }, /control characters/],
      [{ metadata: { ok: 1 } }, /metadata must be an object of text values/],
      [{ content_type: 'not a type' }, /MIME type/],
      [{ colour: 'red' }, /at least one/],
      [{}, /at least one/],
    ];
    for (const [body, message] of refusals) {
      const response = await patch('docs/plain.txt', body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect((await json(response)).error).toMatch(message);
    }
    // Just under the limit is taken: names and values count, as S3 counts them.
    const fits = await patch('docs/plain.txt', { metadata: { a: 'x'.repeat(2036) } });
    expect(fits.status).toBe(200);
    expect((await details('docs/plain.txt')).metadata.a).toHaveLength(2036);
  });

  it('404 for a missing file; 403 for a key without write permission; 404 for another owner', async () => {
    expect((await patch('missing.txt', { metadata: {} })).status).toBe(404);
    const keyResponse = await fetch(`${server.url}/api/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ permissions: ['read'] }),
    });
    const readOnly = devApi(server.url, { apiKey: (await json(keyResponse)).data.key });
    expect((await readOnly(`/${bucketId}/details/docs/plain.txt`)).status).toBe(200);
    const refused = await readOnly(`/${bucketId}/files/docs/plain.txt`, { method: 'PATCH', body: JSON.stringify({ metadata: {} }) });
    expect(refused.status).toBe(403);
    const stranger = devApi(server.url, await signUp(server.url));
    expect((await stranger(`/${bucketId}/files/docs/plain.txt`, { method: 'PATCH', body: JSON.stringify({ metadata: {} }) })).status).toBe(404);
    expect((await details('docs/plain.txt')).metadata.a).toHaveLength(2036);
  });

  it("a new type must be one the bucket takes, for the file's bytes (415)", async () => {
    const limited = (await json(await api('', { method: 'POST', body: JSON.stringify({ name: 'only-text', allowed_types: ['text/*', 'application/json'] }) })))
      .data.id;
    expect((await api(`/${limited}/files/a.txt`, { method: 'PUT', body: 'hello', headers: { 'content-type': 'text/plain' } })).status).toBe(201);
    const edit = (body: unknown) => api(`/${limited}/files/a.txt`, { method: 'PATCH', body: JSON.stringify(body) });
    expect((await edit({ content_type: 'image/png' })).status).toBe(415);
    expect((await edit({ content_type: 'application/json' })).status).toBe(200);
    expect((await json(await api(`/${limited}/details/a.txt`))).data.content_type).toBe('application/json');
  });
});
