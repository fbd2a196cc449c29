/** Accounts: creation (signup, CLI), plans, and the public view of a user. */
import { isPlan, type Plan, type User } from '@pail/shared';
import type { Caches } from '../cache/caches.js';
import { unfinishedHeldBytes } from '../db/repositories/unfinished-uploads.js';
import { findUserByEmail, insertUser, updatePlan } from '../db/repositories/users.js';
import type { AccountRow, Db, UserRow } from '../db/schema.js';
import { nowIso } from './clock.js';
import { errors } from './errors.js';
import { hashPassword, PASSWORD_COST, type PasswordCost } from './passwords.js';
import type { PlanLimits } from './ports.js';

const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+$/;
export const MIN_PASSWORD_LENGTH = 8;

export function planOf(user: Pick<UserRow, 'plan'>): Plan {
  return isPlan(user.plan) ? user.plan : 'free';
}

/** The public view of a user; `heldBytes`: what its unfinished uploads hold against the cap (unfinished-uploads.ts). */
export function userView(user: AccountRow, plans: PlanLimits, heldBytes: number): User {
  const limits = plans[planOf(user)];
  return {
    id: user.id,
    email: user.email,
    plan: planOf(user),
    storage_used_bytes: user.storage_used_bytes,
    storage_held_bytes: heldBytes,
    storage_limit_bytes: limits.storageBytes,
    rate_limit_per_minute: limits.ratePerMinute,
    created_at: user.created_at,
  };
}

/** The public view of a user, with what its unfinished uploads hold read now. */
export async function userWithHoldings(db: Db, user: AccountRow, plans: PlanLimits): Promise<User> {
  return userView(user, plans, await unfinishedHeldBytes(db, user.id));
}

export const normaliseEmail = (email: string): string => email.trim().toLowerCase();

/** Checks and normalises credentials; the same rule serves the API and the CLI. */
export function parseCredentials(input: { email: string; password: string }): { email: string; password: string } {
  const email = normaliseEmail(input.email);
  if (email === '') throw errors.validation('email is required');
  if (input.password === '') throw errors.validation('password is required');
  if (email.length > 254 || !EMAIL_PATTERN.test(email)) throw errors.validation('email is not a valid address');
  return { email, password: input.password };
}

export function parsePlan(plan: string): Plan {
  if (!isPlan(plan)) throw errors.validation(`plan must be one of free, plus, pro, max; got ${JSON.stringify(plan)}`);
  return plan;
}

export async function createUser(
  db: Db,
  input: { email: string; password: string; plan?: string },
  passwordCost: PasswordCost = PASSWORD_COST,
): Promise<UserRow> {
  const { email, password } = parseCredentials(input);
  const plan = parsePlan(input.plan ?? 'free');
  if (password.length < MIN_PASSWORD_LENGTH) {
    throw errors.validation(`password must be at least ${MIN_PASSWORD_LENGTH} characters`);
  }
  if (password.length > 1024) throw errors.validation('password must be at most 1024 characters');
  if (await findUserByEmail(db, email)) throw errors.emailTaken();
  const passwordHash = await hashPassword(password, passwordCost);
  try {
    return await insertUser(db, { email, password_hash: passwordHash, plan, created_at: nowIso() });
  } catch (error) {
    // Two signups racing for one email: the unique index decides.
    if (await findUserByEmail(db, email)) throw errors.emailTaken();
    throw error;
  }
}

export async function findUser(db: Db, email: string): Promise<UserRow | undefined> {
  return findUserByEmail(db, normaliseEmail(email));
}

/** Changes a user's plan; cached principals carry it, so they are renewed everywhere. */
export async function setPlan(ports: { db: Db; caches: Caches }, email: string, plan: string): Promise<UserRow> {
  const user = await updatePlan(ports.db, normaliseEmail(email), parsePlan(plan));
  if (!user) throw errors.validation(`no user with email ${email}`);
  await ports.caches.changed('keys');
  return user;
}
