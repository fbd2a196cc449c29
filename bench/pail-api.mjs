/** Pail's API as the scripts use it: users with keys, buckets, files, and listings. */
import { runLoad } from './load-children.mjs';

export async function api(base, method, url, { key, token, json, expect } = {}) {
  const headers = {};
  if (key) headers['x-api-key'] = key;
  if (token) headers.authorization = `Bearer ${token}`;
  if (json !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(base + url, { method, headers, body: json === undefined ? undefined : JSON.stringify(json) });
  const text = await res.text();
  const ok = expect ? expect.includes(res.status) : res.ok;
  if (!ok) throw new Error(`${method} ${url}: ${res.status} ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : null;
}

/**
 * Signs a user up and makes an API key. Returns { email, token, key,
 * accessKeyId, secretAccessKey } (the last two: the key's S3 credential).
 */
export async function makeUser(base, email) {
  const signup = await api(base, 'POST', '/api/auth/signup', { json: { email, password: 'bench password 1234' }, expect: [201] });
  const token = signup.data.token;
  const created = await api(base, 'POST', '/api/keys', { token, json: { name: 'bench' }, expect: [201] });
  return { email, token, key: created.data.key, accessKeyId: created.data.access_key_id, secretAccessKey: created.data.secret_access_key };
}

export async function makeBucket(base, key, name, visibility) {
  const created = await api(base, 'POST', '/api/v1/buckets', { key, json: { name, visibility }, expect: [201] });
  return created.data.id;
}

/** A private bucket with versioning enabled (issue 37); null on a build without versioning (compare.mjs's "before"). */
export async function makeVersionedBucket(base, key, name) {
  const id = await makeBucket(base, key, name, 'private');
  const response = await fetch(`${base}/api/v1/buckets/${id}`, {
    method: 'PATCH',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ versioning: 'enabled' }),
  });
  // A build without versioning may take the PATCH and ignore the field: versioned only if the bucket says so.
  const body = response.status === 200 ? await response.json() : (await response.text(), null);
  return body?.data?.versioning === 'enabled' ? id : null;
}

export async function putFile(base, key, bucketId, filename, bytes) {
  const res = await fetch(`${base}/api/v1/buckets/${bucketId}/files/${encodeURIComponent(filename)}`, {
    method: 'PUT',
    headers: { 'x-api-key': key, 'content-type': 'application/octet-stream' },
    body: bytes,
  });
  const text = await res.text();
  if (res.status !== 201 && res.status !== 200) throw new Error(`PUT ${filename}: ${res.status} ${text.slice(0, 300)}`);
}

/** Walks a bucket's listing with limit=1000; returns { count, cursors } (cursors[i] starts page i+1). */
export async function walkListing(base, key, bucketId) {
  const cursors = [];
  let count = 0;
  let cursor = '';
  for (;;) {
    const page = await api(base, 'GET', `/api/v1/buckets/${bucketId}/files?limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { key });
    count += page.data.length;
    if (!page.next_cursor) break;
    cursor = page.next_cursor;
    cursors.push(cursor);
  }
  return { count, cursors };
}

/**
 * Puts `count` distinct small files named `<prefix>-<n>` into a bucket with
 * many concurrent PUTs (the load generator, on the load core). Needs raised
 * rate limits.
 */
export async function seedFiles(base, key, bucketId, { prefix, count, bytes = 16, connections = 64 }) {
  const result = await runLoad({
    url: `${base}/api/v1/buckets/${bucketId}/files`,
    method: 'PUT',
    headers: { 'x-api-key': key, 'content-type': 'application/octet-stream' },
    bodyBytes: bytes,
    connections,
    amount: count,
    distinct: { prefix },
  });
  if (result.ok !== count)
    throw new Error(`seeding ${prefix}: ${result.ok} of ${count} PUTs succeeded (${JSON.stringify(result.codes)}, ${result.errors} errors)`);
  return result;
}
