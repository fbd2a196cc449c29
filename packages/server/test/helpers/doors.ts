/**
 * Every way a file gets into Pail, behind one signature: `upload(world, target,
 * key, body)` answers what a user saw, reduced to one outcome (stored, or
 * which rule refused it). The doors × rules suite and the cut-uploads test run
 * the same rules through each of them and expect the same outcome from all.
 */
import {
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  PutObjectCommand,
  type S3Client,
  S3ServiceException,
  UploadPartCommand,
  UploadPartCopyCommand,
  AbortMultipartUploadCommand,
} from '@aws-sdk/client-s3';
import { createPresignedPost } from '@aws-sdk/s3-presigned-post';
import { Agent as HttpAgent } from 'node:http';
import type { TestUser } from './client.js';
import { sdkClient } from './s3-client.js';

/** What a user saw, as one word: stored, or the rule that refused it (or the connection was cut). */
export type Outcome = 'stored' | 'cap' | 'too-large' | 'type' | 'forbidden' | 'rate' | 'cut' | 'other';

export interface Answer {
  outcome: Outcome;
  /** What the door answered, for a failing assertion's message. */
  detail: string;
}

/** Where the request that carries the bytes goes (a cutting proxy in front of the server, or the server). */
export interface Endpoints {
  url: string;
  s3Url: string;
}

export interface DoorWorld {
  /** The server itself: set-up requests go here. */
  direct: Endpoints;
  /** Where the body-carrying request goes. */
  via: Endpoints;
  /** The credentials the upload uses (a key's, and the session's for the Client API). */
  user: Pick<TestUser, 'apiKey' | 'token' | 'accessKeyId' | 'secretAccessKey'>;
  /** Credentials of the bucket's owner with every permission: sources of copies, signed urls. */
  owner: Pick<TestUser, 'apiKey' | 'token' | 'accessKeyId' | 'secretAccessKey'>;
}

export interface Target {
  id: number;
  name: string;
}

export interface UploadOptions {
  contentType?: string;
  /** Send the body with no declared length (chunked), where the door allows it. */
  streamed?: boolean;
  /** For the copy doors: the object to copy (made beforehand by `placeSource`). */
  source?: { bucket: Target; key: string };
}

export interface Door {
  name: string;
  /** Takes its bytes from another object (CopyObject, UploadPartCopy): tests place the source first. */
  copies?: boolean;
  /** Credentials it uses: an API key's (or its S3 pair), the session, or a url signed by the owner. */
  credential: 'key' | 'session' | 'signed-url';
  upload(world: DoorWorld, target: Target, key: string, body: Buffer, options?: UploadOptions): Promise<Answer>;
}

// ---------------------------------------------------------------------------
// Outcomes from the Pail API's {error, code} and S3's XML codes.

async function pailAnswer(response: Response, storedStatus = 201): Promise<Answer> {
  const text = await response.text();
  const detail = `${response.status} ${text.slice(0, 200)}`;
  if (response.status === storedStatus || response.status === 204) return { outcome: 'stored', detail };
  return { outcome: pailOutcome(response.status), detail };
}

function pailOutcome(status: number): Outcome {
  switch (status) {
    case 409:
      return 'cap';
    case 413:
      return 'too-large';
    case 415:
      return 'type';
    case 401:
    case 403:
    case 404:
      return 'forbidden';
    case 429:
      return 'rate';
    default:
      return 'other';
  }
}

const S3_OUTCOMES: Record<string, Outcome> = {
  QuotaExceeded: 'cap',
  EntityTooLarge: 'too-large',
  InvalidArgument: 'type',
  AccessDenied: 'forbidden',
  NoSuchBucket: 'forbidden',
  SlowDown: 'rate',
};

function s3Outcome(code: string | undefined): Outcome {
  return (code === undefined ? undefined : S3_OUTCOMES[code]) ?? 'other';
}

/** A failed fetch or SDK call whose connection was cut is 'cut'; anything else is a thrown fault. */
function cutOrThrow(error: unknown): Answer {
  if (error instanceof S3ServiceException)
    return { outcome: s3Outcome(error.name), detail: `${error.$metadata.httpStatusCode} ${error.name}: ${error.message}` };
  const text = String((error as Error)?.message ?? error) + ' ' + String((error as { cause?: Error }).cause?.message ?? '');
  if (/ECONNRESET|socket hang up|other side closed|fetch failed|EPIPE|terminated|aborted|ECONNREFUSED|premature close/i.test(text)) {
    return { outcome: 'cut', detail: text };
  }
  throw error;
}

async function guarded(run: () => Promise<Answer>): Promise<Answer> {
  try {
    return await run();
  } catch (error) {
    return cutOrThrow(error);
  }
}

// ---------------------------------------------------------------------------
// Requests.

/** An S3 client without kept connections: each request has its own, so a cut ends that one alone. */
export function s3ClientOf(endpoint: string, user: Pick<TestUser, 'accessKeyId' | 'secretAccessKey'>): S3Client {
  return sdkClient(endpoint, user, {
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    requestHandler: { httpAgent: new HttpAgent({ keepAlive: false }) },
  });
}

function bodyOf(bytes: Buffer, streamed: boolean | undefined): { body: BodyInit; duplex?: 'half' } {
  if (!streamed) return { body: new Uint8Array(bytes) };
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let at = 0; at < bytes.length; at += 16 * 1024) controller.enqueue(new Uint8Array(bytes.subarray(at, at + 16 * 1024)));
      controller.close();
    },
  });
  return { body: stream, duplex: 'half' };
}

const file = (key: string) => key.split('/').map(encodeURIComponent).join('/');

const rawPut =
  (base: string, headers: Record<string, string>): Door['upload'] =>
  (world, target, key, body, options = {}) =>
    guarded(async () => {
      const sent = bodyOf(body, options.streamed);
      const response = await fetch(
        `${base === 'client' ? world.via.url + '/api/buckets' : world.via.url + '/api/v1/buckets'}/${target.id}/files/${file(key)}`,
        {
          method: 'PUT',
          headers: { ...headers, ...authOf(base, world), 'content-type': options.contentType ?? 'application/octet-stream', connection: 'close' },
          ...sent,
        },
      );
      return pailAnswer(response);
    });

function authOf(base: string, world: DoorWorld): Record<string, string> {
  return base === 'client' ? { authorization: `Bearer ${world.user.token}` } : { 'x-api-key': world.user.apiKey };
}

const TUS = { 'tus-resumable': '1.0.0' };
const tusMetadata = (fields: Record<string, string>) =>
  Object.entries(fields)
    .map(([name, value]) => `${name} ${Buffer.from(value).toString('base64')}`)
    .join(',');

/** Creates a resumable upload (on the server itself) and answers its url, or the refusal. */
export async function createTusUpload(world: DoorWorld, target: Target, key: string, length: number, contentType: string): Promise<string | Answer> {
  const created = await fetch(`${world.direct.url}/api/v1/buckets/${target.id}/uploads`, {
    method: 'POST',
    headers: { ...TUS, 'x-api-key': world.user.apiKey, 'upload-length': String(length), 'upload-metadata': tusMetadata({ filename: key, contentType }) },
  });
  if (created.status !== 201) return pailAnswer(created);
  await created.body?.cancel();
  return new URL(created.headers.get('location')!, world.direct.url).pathname;
}

/** Sends `body` as the upload's bytes from `offset`, through world.via. */
export async function patchTusUpload(world: DoorWorld, path: string, offset: number, body: Buffer): Promise<Answer> {
  return guarded(async () => {
    const response = await fetch(`${world.via.url}${path}`, {
      method: 'PATCH',
      headers: {
        ...TUS,
        'x-api-key': world.user.apiKey,
        'upload-offset': String(offset),
        'content-type': 'application/offset+octet-stream',
        connection: 'close',
      },
      body: new Uint8Array(body),
    });
    return pailAnswer(response, 204);
  });
}

/** The offset a resumable upload reports (HEAD), or null once it ended. */
export async function tusOffset(world: DoorWorld, path: string): Promise<number | null> {
  const response = await fetch(`${world.direct.url}${path}`, { method: 'HEAD', headers: { ...TUS, 'x-api-key': world.user.apiKey } });
  return response.status === 200 ? Number(response.headers.get('upload-offset')) : null;
}

async function multipart(
  world: DoorWorld,
  target: Target,
  key: string,
  options: UploadOptions,
  part: (s3: S3Client, uploadId: string) => Promise<string>,
): Promise<Answer> {
  const setUp = s3ClientOf(world.direct.s3Url, world.user);
  let uploadId: string;
  try {
    uploadId = (await setUp.send(new CreateMultipartUploadCommand({ Bucket: target.name, Key: key, ContentType: options.contentType }))).UploadId!;
  } catch (error) {
    return cutOrThrow(error);
  }
  const answer = await guarded(async () => {
    const etag = await part(s3ClientOf(world.via.s3Url, world.user), uploadId);
    await setUp.send(
      new CompleteMultipartUploadCommand({ Bucket: target.name, Key: key, UploadId: uploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: etag }] } }),
    );
    return { outcome: 'stored', detail: 'completed' };
  });
  // A refused or cut upload is ended by its client, as the SDKs' upload helpers do.
  if (answer.outcome !== 'stored') await setUp.send(new AbortMultipartUploadCommand({ Bucket: target.name, Key: key, UploadId: uploadId })).catch(() => {});
  return answer;
}

const copySource = (options: UploadOptions) => {
  if (!options.source) throw new Error('a copy door needs options.source');
  return `${options.source.bucket.name}/${file(options.source.key)}`;
};

// ---------------------------------------------------------------------------
// The doors.

export const DOORS: Door[] = [
  { name: 'PUT (Developer API)', credential: 'key', upload: rawPut('dev', {}) },
  {
    name: 'POST multipart (Developer API)',
    credential: 'key',
    upload: (world, target, key, body, options = {}) =>
      guarded(async () => {
        const form = new FormData();
        form.append('file', new Blob([new Uint8Array(body)], { type: options.contentType ?? 'application/octet-stream' }), key);
        const response = await fetch(`${world.via.url}/api/v1/buckets/${target.id}/files`, {
          method: 'POST',
          headers: { 'x-api-key': world.user.apiKey, connection: 'close' },
          body: form,
        });
        return pailAnswer(response);
      }),
  },
  { name: 'PUT (Client API)', credential: 'session', upload: rawPut('client', {}) },
  {
    name: 'signed-url PUT',
    credential: 'signed-url',
    upload: async (world, target, key, body, options = {}) => {
      // The url is made by the uploading credential (a key that may not write cannot make one).
      const made = await fetch(`${world.direct.url}/api/v1/buckets/${target.id}/files/${file(key)}/signed-url`, {
        method: 'POST',
        headers: { 'x-api-key': world.user.apiKey, 'content-type': 'application/json' },
        body: JSON.stringify({ method: 'PUT', expires_in: 600 }),
      });
      if (made.status !== 201) return pailAnswer(made);
      const url = new URL(((await made.json()) as { data: { url: string } }).data.url);
      return guarded(async () => {
        const sent = bodyOf(body, options.streamed);
        const response = await fetch(`${world.via.url}${url.pathname}${url.search}`, {
          method: 'PUT',
          headers: { 'content-type': options.contentType ?? 'application/octet-stream', connection: 'close' },
          ...sent,
        });
        return pailAnswer(response);
      });
    },
  },
  {
    name: 'tus',
    credential: 'key',
    upload: async (world, target, key, body, options = {}) => {
      const created = await createTusUpload(world, target, key, body.length, options.contentType ?? 'application/octet-stream');
      if (typeof created !== 'string') return created;
      const answer = await patchTusUpload(world, created, 0, body);
      // A refused or cut upload is ended by its client, as tus-js-client's abort(true) does.
      if (answer.outcome !== 'stored') await fetch(`${world.direct.url}${created}`, { method: 'DELETE', headers: { ...TUS, 'x-api-key': world.user.apiKey } });
      return answer;
    },
  },
  {
    name: 'S3 PutObject',
    credential: 'key',
    upload: (world, target, key, body, options = {}) =>
      guarded(async () => {
        await s3ClientOf(world.via.s3Url, world.user).send(
          new PutObjectCommand({ Bucket: target.name, Key: key, Body: body, ContentType: options.contentType }),
        );
        return { outcome: 'stored', detail: 'PutObject' };
      }),
  },
  {
    name: 'S3 POST Object',
    credential: 'key',
    upload: async (world, target, key, body, options = {}) => {
      const { fields } = await createPresignedPost(s3ClientOf(world.direct.s3Url, world.user), {
        Bucket: target.name,
        Key: key,
        Fields: { 'Content-Type': options.contentType ?? 'application/octet-stream' },
      });
      return guarded(async () => {
        const form = new FormData();
        for (const [name, value] of Object.entries(fields)) form.append(name, value);
        form.append('file', new Blob([new Uint8Array(body)]), 'file');
        const response = await fetch(`${world.via.s3Url}/${target.name}`, { method: 'POST', body: form, headers: { connection: 'close' } });
        const text = await response.text();
        if (response.status === 204 || response.status === 200 || response.status === 201) return { outcome: 'stored', detail: String(response.status) };
        return { outcome: s3Outcome(/<Code>([^<]*)<\/Code>/.exec(text)?.[1]), detail: `${response.status} ${text.slice(0, 300)}` };
      });
    },
  },
  {
    name: 'S3 multipart (UploadPart)',
    credential: 'key',
    upload: (world, target, key, body, options = {}) =>
      multipart(world, target, key, options, async (s3, uploadId) => {
        return (await s3.send(new UploadPartCommand({ Bucket: target.name, Key: key, UploadId: uploadId, PartNumber: 1, Body: body }))).ETag!;
      }),
  },
  {
    name: 'S3 multipart (UploadPartCopy)',
    credential: 'key',
    copies: true,
    upload: (world, target, key, _body, options = {}) =>
      multipart(world, target, key, options, async (s3, uploadId) => {
        const copied = await s3.send(
          new UploadPartCopyCommand({ Bucket: target.name, Key: key, UploadId: uploadId, PartNumber: 1, CopySource: copySource(options) }),
        );
        return copied.CopyPartResult!.ETag!;
      }),
  },
  {
    name: 'S3 CopyObject',
    credential: 'key',
    copies: true,
    upload: (world, target, key, _body, options = {}) =>
      guarded(async () => {
        await s3ClientOf(world.via.s3Url, world.user).send(
          new CopyObjectCommand({
            Bucket: target.name,
            Key: key,
            CopySource: copySource(options),
            ...(options.contentType ? { ContentType: options.contentType, MetadataDirective: 'REPLACE' } : {}),
          }),
        );
        return { outcome: 'stored', detail: 'CopyObject' };
      }),
  },
];

/** Puts a copy door's source object in place, through the Developer API on the server itself, as the owner. */
export async function placeSource(world: DoorWorld, bucket: Target, key: string, body: Buffer, contentType = 'application/octet-stream'): Promise<void> {
  const response = await fetch(`${world.direct.url}/api/v1/buckets/${bucket.id}/files/${file(key)}`, {
    method: 'PUT',
    headers: { 'x-api-key': world.owner.apiKey, 'content-type': contentType },
    body: new Uint8Array(body),
  });
  if (response.status !== 201) throw new Error(`placing the copy source failed: ${response.status} ${await response.text()}`);
}
