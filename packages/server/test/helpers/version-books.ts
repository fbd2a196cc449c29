/**
 * The books of a versioned bucket read as a client reads them, over HTTP (a
 * server in a child process, after a crash): each name's versions listed,
 * exactly one latest, and the bucket's counts and the owner's usage equal to
 * what those versions hold.
 */
import { expect } from 'vitest';
import { json } from './client.js';

interface ListedVersion {
  size: number;
  is_latest: boolean;
  is_delete_marker: boolean;
}

/** Asserts the books close; answers each name's versions (newest first) for further checks. */
export async function expectVersionBooksClose(
  base: string,
  user: { apiKey: string; token: string },
  bucketId: number,
  names: readonly string[],
): Promise<Map<string, ListedVersion[]>> {
  const headers = { 'x-api-key': user.apiKey };
  const listed = new Map<string, ListedVersion[]>();
  let current = 0;
  let total = 0;
  let noncurrent = 0;
  for (const name of names) {
    const versions = (await json(await fetch(`${base}/api/v1/buckets/${bucketId}/files/${name}/versions`, { headers }))).data as ListedVersion[];
    expect(versions.filter((v) => v.is_latest)).toHaveLength(1);
    for (const version of versions) {
      total += version.size;
      if (!version.is_latest) noncurrent += version.size;
      if (version.is_latest && !version.is_delete_marker) current += 1;
    }
    listed.set(name, versions);
  }
  const record = (await json(await fetch(`${base}/api/v1/buckets/${bucketId}`, { headers }))).data;
  expect(record).toMatchObject({ object_count: current, total_bytes: total, noncurrent_bytes: noncurrent });
  const me = (await json(await fetch(`${base}/api/auth/me`, { headers: { authorization: `Bearer ${user.token}` } }))).data;
  expect(me.storage_used_bytes).toBe(total);
  return listed;
}
