/**
 * A file's tags through the Pail API (issue 37, item 4): `GET/PUT/DELETE
 * …/files/<filename>/tags` on both storage APIs, S3's limits with the same
 * messages as the S3 door, the same tags S3 reads and writes, tags in the
 * file's details, and a file whose last segment is `tags` still reachable.
 */
import { GetObjectTaggingCommand, HeadObjectCommand, PutObjectTaggingCommand, type S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { devApi, json, signUp, type TestUser } from './helpers/client.js';
import { sdkClient } from './helpers/s3-client.js';
import { startTestServer, type TestServer } from './helpers/server.js';

let server: TestServer;
let user: TestUser;
let api: ReturnType<typeof devApi>;
let s3: S3Client;
let bucketId: number;
const BUCKET = `file-tags-${Date.now().toString(36)}`;

const upload = async (name: string, body = 'bytes') => {
  const response = await api(`/${bucketId}/files/${name}`, { method: 'PUT', body, headers: { 'content-type': 'text/plain' } });
  expect(response.status).toBe(201);
};
const putTags = (name: string, body: unknown) => api(`/${bucketId}/files/${name}/tags`, { method: 'PUT', body: JSON.stringify(body) });
const tagsOf = async (name: string) => {
  const response = await api(`/${bucketId}/files/${name}/tags`);
  expect(response.status).toBe(200);
  return (await json(response)).data.tags;
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

describe('file tags on the Pail API', () => {
  it('sets, reads and removes a file’s tags; S3 reads the same set; bytes and ETag stay', async () => {
    await upload('docs/report.txt', 'report');
    expect(await tagsOf('docs/report.txt')).toEqual({});
    const etag = (await api(`/${bucketId}/files/docs/report.txt`, { method: 'HEAD' })).headers.get('etag');

    const put = await putTags('docs/report.txt', { tags: { stage: 'final', project: 'pail', 'naïve key': 'café ☕' } });
    expect(put.status).toBe(200);
    // Kept in S3's order: by key, byte order.
    expect(Object.entries((await json(put)).data.tags)).toEqual([
      ['naïve key', 'café ☕'],
      ['project', 'pail'],
      ['stage', 'final'],
    ]);
    expect(await tagsOf('docs/report.txt')).toEqual({ 'naïve key': 'café ☕', project: 'pail', stage: 'final' });

    const s3Tags = await s3.send(new GetObjectTaggingCommand({ Bucket: BUCKET, Key: 'docs/report.txt' }));
    expect(s3Tags.TagSet).toEqual([
      { Key: 'naïve key', Value: 'café ☕' },
      { Key: 'project', Value: 'pail' },
      { Key: 'stage', Value: 'final' },
    ]);
    const head = await s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'docs/report.txt' }));
    expect(head.TagCount).toBe(3);
    const download = await api(`/${bucketId}/files/docs/report.txt`);
    expect(download.headers.get('etag')).toBe(etag);
    expect(await download.text()).toBe('report');

    // A PUT replaces the set whole.
    expect((await putTags('docs/report.txt', { tags: { only: 'one' } })).status).toBe(200);
    expect(await tagsOf('docs/report.txt')).toEqual({ only: 'one' });

    const removed = await api(`/${bucketId}/files/docs/report.txt/tags`, { method: 'DELETE' });
    expect(removed.status).toBe(200);
    expect((await json(removed)).data.tags).toEqual({});
    expect((await s3.send(new GetObjectTaggingCommand({ Bucket: BUCKET, Key: 'docs/report.txt' }))).TagSet).toEqual([]);
    // The file itself is still there: DELETE …/tags removed only its tags.
    expect((await api(`/${bucketId}/files/docs/report.txt`)).status).toBe(200);
  });

  it('shows tags set through S3 in the file’s details and on the Client API', async () => {
    await upload('from-s3.txt');
    await s3.send(new PutObjectTaggingCommand({ Bucket: BUCKET, Key: 'from-s3.txt', Tagging: { TagSet: [{ Key: 'owner', Value: 'ada' }] } }));
    const details = await json(await api(`/${bucketId}/details/from-s3.txt`));
    expect(details.data.tags).toEqual({ owner: 'ada' });

    const cookie = { cookie: user.cookie };
    const client = await fetch(`${server.url}/api/buckets/${bucketId}/files/from-s3.txt/tags`, { headers: cookie });
    expect((await json(client)).data.tags).toEqual({ owner: 'ada' });
    const set = await fetch(`${server.url}/api/buckets/${bucketId}/files/from-s3.txt/tags`, {
      method: 'PUT',
      headers: { ...cookie, 'content-type': 'application/json' },
      body: JSON.stringify({ tags: { owner: 'grace' } }),
    });
    expect(set.status).toBe(200);
    expect((await s3.send(new GetObjectTaggingCommand({ Bucket: BUCKET, Key: 'from-s3.txt' }))).TagSet).toEqual([{ Key: 'owner', Value: 'grace' }]);
    // The details after a metadata edit keep the tags.
    const edited = await api(`/${bucketId}/files/from-s3.txt`, { method: 'PATCH', body: JSON.stringify({ metadata: { a: 'b' } }) });
    expect((await json(edited)).data.tags).toEqual({ owner: 'grace' });
  });

  it('refuses what S3 refuses, with S3’s reasons, and keeps the tags it had', async () => {
    await upload('limits.txt');
    expect((await putTags('limits.txt', { tags: { keep: 'me' } })).status).toBe(200);
    const eleven = Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`k${i}`, 'v']));
    const refusals: [unknown, RegExp][] = [
      [{ tags: eleven }, /cannot be greater than 10/],
      [{ tags: { ['k'.repeat(129)]: 'v' } }, /TagKey .* too long/],
      [{ tags: { k: 'v'.repeat(257) } }, /TagValue .* too long/],
      [{ tags: { '': 'v' } }, /TagKey .* invalid/],
      [{ tags: { 'aws:owner': 'v' } }, /aws:/],
      [{ tags: { k: 1 } }, /tags must be an object of text values/],
      [{}, /tags is required/],
      [[], /JSON object/],
    ];
    for (const [body, reason] of refusals) {
      const response = await putTags('limits.txt', body);
      expect(response.status, JSON.stringify(body).slice(0, 60)).toBe(400);
      expect((await json(response)).error).toMatch(reason);
    }
    expect(await tagsOf('limits.txt')).toEqual({ keep: 'me' });

    // At the limits, counted in characters (an emoji is one), as S3 counts.
    const atLimits = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`${i}${'😀'.repeat(127)}`, '😀'.repeat(256)]));
    expect((await putTags('limits.txt', { tags: atLimits })).status).toBe(200);
    expect(Object.keys(await tagsOf('limits.txt'))).toHaveLength(10);
  });

  it('a file whose last segment is `tags` is named with %2F; a file named `tags` needs nothing', async () => {
    await upload('notes%2Ftags', 'a file named notes/tags');
    await upload('tags', 'a file named tags');
    expect(await (await api(`/${bucketId}/files/notes%2Ftags`)).text()).toBe('a file named notes/tags');
    expect(await (await api(`/${bucketId}/files/tags`)).text()).toBe('a file named tags');
    expect((await putTags('notes%2Ftags', { tags: { kind: 'note' } })).status).toBe(200);
    expect(await tagsOf('notes%2Ftags')).toEqual({ kind: 'note' });
    expect(await tagsOf('tags')).toEqual({});
    // The literal path names the tags of `notes`, which does not exist.
    expect((await api(`/${bucketId}/files/notes/tags`)).status).toBe(404);
  });

  it('404 for a missing file or another owner’s bucket; a public bucket’s tags are still its owner’s', async () => {
    expect((await api(`/${bucketId}/files/missing.txt/tags`)).status).toBe(404);
    expect((await putTags('missing.txt', { tags: { a: 'b' } })).status).toBe(404);
    const stranger = devApi(server.url, await signUp(server.url));
    expect((await stranger(`/${bucketId}/files/from-s3.txt/tags`)).status).toBe(404);
    expect((await stranger(`/${bucketId}/files/from-s3.txt/tags`, { method: 'PUT', body: '{"tags":{}}' })).status).toBe(404);

    expect((await api(`/${bucketId}/visibility`, { method: 'POST', body: JSON.stringify({ visibility: 'public' }) })).status).toBe(200);
    expect((await fetch(`${server.url}/api/v1/buckets/${bucketId}/files/from-s3.txt`)).status).toBe(200);
    expect((await fetch(`${server.url}/api/v1/buckets/${bucketId}/files/from-s3.txt/tags`)).status).toBe(401);
  });
});
