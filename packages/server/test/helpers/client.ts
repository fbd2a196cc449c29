/** Small HTTP helpers for tests: a signed-up user with a session and an API key. */
import { randomUUID } from 'node:crypto';

export interface TestUser {
  email: string;
  password: string;
  token: string;
  cookie: string;
  apiKey: string;
  /** The S3 credential made with apiKey. */
  accessKeyId: string;
  secretAccessKey: string;
  id: number;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a body of any shape; the tests' expect() calls are its type check
export async function json(response: Response): Promise<any> {
  const text = await response.text();
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`Expected JSON, got ${response.status}: ${text.slice(0, 200)}`);
  }
}

export async function signUp(baseUrl: string, email = `user-${randomUUID()}@example.com`, password = 'correct horse'): Promise<TestUser> {
  const response = await fetch(`${baseUrl}/api/auth/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  if (response.status !== 201) throw new Error(`signup failed: ${response.status} ${await response.text()}`);
  const body = await json(response);
  const cookie = (response.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  const keyResponse = await fetch(`${baseUrl}/api/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${body.data.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'test' }),
  });
  const key = await json(keyResponse);
  return {
    email,
    password,
    token: body.data.token,
    cookie,
    apiKey: key.data.key,
    accessKeyId: key.data.access_key_id,
    secretAccessKey: key.data.secret_access_key,
    id: body.data.user.id,
  };
}

/** fetch against the Developer API with this user's key. */
export function devApi(baseUrl: string, user: Pick<TestUser, 'apiKey'>) {
  return (pathname: string, init: RequestInit = {}) =>
    fetch(`${baseUrl}/api/v1/buckets${pathname}`, {
      ...init,
      headers: {
        'x-api-key': user.apiKey,
        ...(init.body && typeof init.body === 'string' ? { 'content-type': 'application/json' } : {}),
        ...(init.headers as Record<string, string>),
      },
    });
}
