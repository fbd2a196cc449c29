/** Accounts: creation (signup, CLI), lookup, plans, and the public view of a user. */
import { isPlan, type Plan, type User } from '@pail/shared';
import type { Config } from '../config.js';
import type { Db } from '../db/database.js';
import type { UserRow } from '../db/schema.js';
import { moveCacheEpoch } from './cache-epoch.js';
import { nowIso } from './clock.js';
import { errors } from './errors.js';
import { hashPassword } from './passwords.js';

export type PlanLimits = Config['plans'];

const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+$/;
export const MIN_PASSWORD_LENGTH = 8;

export function planOf(user: Pick<UserRow, 'plan'>): Plan {
  return isPlan(user.plan) ? user.plan : 'free';
}

export function userView(user: UserRow, plans: PlanLimits): User {
  const limits = plans[planOf(user)];
  return {
    id: user.id,
    email: user.email,
    plan: planOf(user),
    storage_used_bytes: user.storage_used_bytes,
    storage_limit_bytes: limits.storageBytes,
    rate_limit_per_minute: limits.ratePerMinute,
    created_at: user.created_at,
  };
}

/** Checks and normalises signup input; the same rule serves the API and the CLI. */
export function parseCredentials(body: { email?: unknown; password?: unknown }): { email: string; password: string } {
  const { email, password } = body;
  if (typeof email !== 'string' || email.trim() === '') throw errors.validation('email is required');
  if (typeof password !== 'string' || password === '') throw errors.validation('password is required');
  const normalised = email.trim().toLowerCase();
  if (normalised.length > 254 || !EMAIL_PATTERN.test(normalised)) throw errors.validation('email is not a valid address');
  return { email: normalised, password };
}

export async function createUser(db: Db, input: { email?: unknown; password?: unknown; plan?: Plan }): Promise<UserRow> {
  const { email, password } = parseCredentials(input);
  if (password.length < MIN_PASSWORD_LENGTH) {
    throw errors.validation(`password must be at least ${MIN_PASSWORD_LENGTH} characters`);
  }
  if (password.length > 1024) throw errors.validation('password must be at most 1024 characters');
  const existing = await findUserByEmail(db, email);
  if (existing) throw errors.emailTaken();
  const passwordHash = await hashPassword(password);
  try {
    return await db
      .insertInto('users')
      .values({ email, password_hash: passwordHash, plan: input.plan ?? 'free', created_at: nowIso() })
      .returningAll()
      .executeTakeFirstOrThrow();
  } catch (error) {
    // Two signups racing for one email: the unique index decides.
    if (await findUserByEmail(db, email)) throw errors.emailTaken();
    throw error;
  }
}

export function findUserByEmail(db: Db, email: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('email', '=', email.trim().toLowerCase()).executeTakeFirst();
}

export function findUserById(db: Db, id: number): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

export function listUsers(db: Db): Promise<UserRow[]> {
  return db.selectFrom('users').selectAll().orderBy('id').execute();
}

export async function setPlan(db: Db, email: string, plan: string): Promise<UserRow> {
  if (!isPlan(plan)) throw errors.validation(`plan must be one of free, plus, pro, max; got ${JSON.stringify(plan)}`);
  const user = await db
    .updateTable('users')
    .set({ plan })
    .where('email', '=', email.trim().toLowerCase())
    .returningAll()
    .executeTakeFirst();
  if (!user) throw errors.validation(`no user with email ${email}`);
  await moveCacheEpoch(db);
  return user;
}
