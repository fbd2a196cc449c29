/**
 * A request that never becomes one (headers too late, too large, or not HTTP)
 * is refused in the listener's own format, like every other error: `{error,
 * code}` on the Pail API, S3's XML on the S3 API, and the connection closed.
 * The header timeout is shorter than the idle timeout here, so the answer is
 * written rather than the socket cut by the idle sweep.
 */
import { CreateBucketCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp, type TestUser } from './helpers/client.js';
import { sdkClient } from './helpers/s3-client.js';
import { startTestServer, type TestServer } from './helpers/server.js';

let server: TestServer;
let user: TestUser;
let apiPort: number;
let s3Port: number;

beforeAll(async () => {
  server = await startTestServer({ s3: true, env: { HEADERS_TIMEOUT_SECONDS: '1', IDLE_TIMEOUT_SECONDS: '30' } });
  apiPort = Number(new URL(server.url).port);
  s3Port = Number(new URL(server.s3Url!).port);
  user = await signUp(server.url);
});
afterAll(() => server.close());

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Sends `text` on a new connection and reads until the server closes it: every answer it wrote, in order. */
function exchange(port: number, text: string): Promise<Answer[]> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(text));
    let received = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(parseAnswers(received)));
  });
}

function parseAnswers(text: string): Answer[] {
  const answers: Answer[] = [];
  let rest = text;
  while (rest.length > 0) {
    const end = rest.indexOf('\r\n\r\n');
    const [statusLine = '', ...lines] = rest.slice(0, end).split('\r\n');
    const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
    const length = Number(headers['content-length']);
    answers.push({ status: Number(statusLine.split(' ')[1]), headers, body: rest.slice(end + 4, end + 4 + length) });
    rest = rest.slice(end + 4 + length);
  }
  return answers;
}

const LATE = 'GET /healthz HTTP/1.1\r\nHost: pail\r\nX-Still-Coming: ';
const MALFORMED = 'GET /healthz HTTP/1.1\r\nHost: pail\r\nthis is no header\r\n\r\n';
const TOO_LARGE = `GET /healthz HTTP/1.1\r\nHost: pail\r\nX-Large: ${'a'.repeat(17 * 1024)}\r\n\r\n`;

describe('a request that never became one', () => {
  // The two doors' refusals, side by side: each waits out the 1 s headers timeout on its own listener.
  it.concurrent(
    'on the Pail API: 408 for late headers, 400 for bytes that are not HTTP, 431 for headers over 16 KiB, each as {error, code}',
    async ({ expect }) => {
      const [late, malformed, tooLarge] = await Promise.all([exchange(apiPort, LATE), exchange(apiPort, MALFORMED), exchange(apiPort, TOO_LARGE)]);
      expect(late).toHaveLength(1);
      expect(late[0]!.status).toBe(408);
      expect(late[0]!.headers['content-type']).toMatch(/^application\/json/);
      expect(JSON.parse(late[0]!.body)).toEqual({ error: "Request timeout: the request's headers did not all arrive in time", code: 'RequestTimeout' });
      expect(malformed[0]!.status).toBe(400);
      expect(JSON.parse(malformed[0]!.body)).toEqual({ error: 'Malformed HTTP request', code: 'ValidationError' });
      expect(tooLarge[0]!.status).toBe(431);
      expect(JSON.parse(tooLarge[0]!.body)).toEqual({ error: 'Request header fields too large: at most 16 KiB of headers', code: 'HeadersTooLarge' });
      for (const [answer] of [late, malformed, tooLarge]) {
        expect(answer!.headers['connection']).toBe('close');
        expect(answer!.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      }
    },
  );

  it.concurrent("on the S3 API: S3's XML errors, RequestTimeout and RequestHeaderSectionTooLarge as S3 answers them", async ({ expect }) => {
    const [late, malformed, tooLarge] = await Promise.all([exchange(s3Port, LATE), exchange(s3Port, MALFORMED), exchange(s3Port, TOO_LARGE)]);
    const expected: [Answer[], string][] = [
      [late, 'RequestTimeout'],
      [malformed, 'InvalidArgument'],
      [tooLarge, 'RequestHeaderSectionTooLarge'],
    ];
    for (const [[answer], code] of expected) {
      expect(answer!.status).toBe(400);
      expect(answer!.headers['content-type']).toBe('application/xml');
      const requestId = answer!.headers['x-amz-request-id'];
      expect(answer!.body).toContain(`<Error><Code>${code}</Code>`);
      expect(answer!.body).toContain(`<RequestId>${requestId}</RequestId>`);
      expect(answer!.body).not.toContain('statusCode');
    }
  });

  it('after answered requests on the same connection: each answer whole, in turn, then the refusal', async () => {
    const answered = 'GET /healthz HTTP/1.1\r\nHost: pail\r\n\r\n';
    const answers = await exchange(apiPort, `${answered}${answered}${MALFORMED}`);
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 400]);
    expect(JSON.parse(answers[0]!.body)).toMatchObject({ status: 'ok' });
  });

  it('an upload whose chunked body breaks is refused at once, and nothing is stored', async () => {
    const created = await fetch(`${server.url}/api/v1/buckets`, {
      method: 'POST',
      headers: { 'x-api-key': user.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'broken-bodies' }),
    }).then((response) => response.json());
    const bucket = (created as { data: { id: number } }).data.id;
    const head = `PUT /api/v1/buckets/${bucket}/files/broken.bin HTTP/1.1\r\nHost: pail\r\nx-api-key: ${user.apiKey}\r\nTransfer-Encoding: chunked\r\n\r\n`;
    const answers = await exchange(apiPort, `${head}5\r\nhello\r\nnot-a-size\r\n`);
    expect(answers.map((answer) => answer.status)).toEqual([400]);
    expect(JSON.parse(answers[0]!.body)).toEqual({ error: 'Malformed HTTP request', code: 'ValidationError' });
    const listed = await fetch(`${server.url}/api/v1/buckets/${bucket}/files`, { headers: { 'x-api-key': user.apiKey } }).then((response) => response.json());
    expect((listed as { data: unknown[] }).data).toEqual([]);
  });

  it('the AWS SDK reads the S3 answer to headers over 16 KiB as the S3 error it is, and nothing is stored', async () => {
    const s3 = sdkClient(server.s3Url!, user);
    await s3.send(new CreateBucketCommand({ Bucket: 'large-headers' }));
    const refused = await s3
      .send(new PutObjectCommand({ Bucket: 'large-headers', Key: 'a.txt', Body: 'hello', Metadata: { note: 'x'.repeat(17 * 1024) } }))
      .catch((error: unknown) => error as { name: string; $metadata: { httpStatusCode: number } });
    expect(refused).toMatchObject({ name: 'RequestHeaderSectionTooLarge', $metadata: { httpStatusCode: 400 } });
    const listed = await fetch(`${server.url}/api/v1/buckets`, { headers: { 'x-api-key': user.apiKey } }).then((response) => response.json());
    const bucket = (listed as { data: { name: string; object_count: number }[] }).data.find((b) => b.name === 'large-headers');
    expect(bucket?.object_count).toBe(0);
  });
});
