/**
 * Password hashing with Node's built-in scrypt: salted, slow, and no native
 * dependency. Stored as `scrypt$N$r$p$salt$hash` so parameters can change later.
 */
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/** scrypt's cost parameters: N (CPU and memory), r (block size), p (parallelism). */
export interface PasswordCost {
  N: number;
  r: number;
  p: number;
}

/** The cost every new password is hashed at. Tests build the app with a cheaper one (buildApp's passwordCost); nothing else may. */
export const PASSWORD_COST: Readonly<PasswordCost> = Object.freeze({ N: 16384, r: 8, p: 1 });
const KEY_LENGTH = 32;

function derive(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password, salt, KEY_LENGTH, { ...options, maxmem: 64 * 1024 * 1024 }, (error, key) => (error ? reject(error) : resolve(key))),
  );
}

export async function hashPassword(password: string, cost: PasswordCost = PASSWORD_COST): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, cost);
  return ['scrypt', cost.N, cost.r, cost.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const key = await derive(password, Buffer.from(salt, 'base64url'), { N: Number(n), r: Number(r), p: Number(p) });
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/** Spent on unknown emails too, at the cost real passwords are hashed at, so response time does not reveal which emails exist. */
const dummyHashes = new Map<string, Promise<string>>();
export function dummyPasswordHash(cost: PasswordCost = PASSWORD_COST): Promise<string> {
  const key = `${cost.N}$${cost.r}$${cost.p}`;
  let hash = dummyHashes.get(key);
  if (!hash) dummyHashes.set(key, (hash = hashPassword('not-a-real-password', cost)));
  return hash;
}
