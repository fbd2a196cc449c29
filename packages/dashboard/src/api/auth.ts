import type { AuthResult, User } from '@pail/shared';
import { request } from './http';

export interface Credentials {
  email: string;
  password: string;
}

export async function signup(credentials: Credentials): Promise<User> {
  const res = await request<{ data: AuthResult }>('/api/auth/signup', {
    method: 'POST',
    body: credentials,
    skipUnauthorizedHook: true,
  });
  return res.data.user;
}

export async function login(credentials: Credentials): Promise<User> {
  const res = await request<{ data: AuthResult }>('/api/auth/login', {
    method: 'POST',
    body: credentials,
    skipUnauthorizedHook: true,
  });
  return res.data.user;
}

export async function logout(): Promise<void> {
  await request<{ message: string }>('/api/auth/logout', { method: 'POST', skipUnauthorizedHook: true });
}

export async function me(): Promise<User> {
  const res = await request<{ data: User }>('/api/auth/me', { skipUnauthorizedHook: true });
  return res.data;
}
