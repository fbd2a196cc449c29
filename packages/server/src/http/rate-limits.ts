/**
 * Request budgets, on rate-limiter-flexible: in-process counters by default,
 * Redis when REDIS_URL is set (one budget per user across all instances).
 * - Developer API: per user, all of a user's keys share it; size from the plan.
 * - Client API (sessions): per user, its own budget (CLIENT_RATE_LIMIT), so a
 *   session token is no way around the plan's.
 * - Anonymous public downloads: per client IP.
 * - Signed urls (share links, and S3 presigned urls): per client IP, a budget
 *   of their own (SIGNED_URL_RATE_LIMIT), so a link handed out never spends
 *   its owner's budget, nor is refused because the owner's script is busy.
 * - Sign-ups: per client IP, per hour.
 * - Login failures: per account from each client IP, and per client IP, over
 *   15 minutes. An account guessed at from one address stays open to its
 *   owner's address.
 * If Redis cannot be reached the request fails with 503, never hangs.
 */
import type { Plan } from '@pail/shared';
import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Config } from '../config.js';
import type { AccountRow } from '../db/schema.js';
import { errors } from '../domain/errors.js';
import { planOf } from '../domain/users.js';
import type { Principal } from '../domain/principal.js';

const LOGIN_WINDOW_SECONDS = 15 * 60;
const SIGNUP_WINDOW_SECONDS = 60 * 60;

export interface Budget {
  limit: number;
  remaining: number;
  /** Seconds until the window resets. */
  resetSeconds: number;
}

/**
 * All of one owner's share links together may serve this many times the
 * owner's plan rate: far above what the owner's own key may do, so a link
 * handed out keeps answering while the owner's script is busy, yet bounded,
 * so presigning (locally, for free) is no way around the plan's rate.
 */
export const SHARE_LINKS_PER_PLAN_RATE = 10;
const linksRate = (planRate: number) => planRate * SHARE_LINKS_PER_PLAN_RATE;

export class RateLimits {
  private readonly perPlan: Record<Plan, RateLimiterAbstract>;
  private readonly publicIp: RateLimiterAbstract;
  private readonly client: RateLimiterAbstract;
  private readonly signedUrls: RateLimiterAbstract;
  /** Every share link of one owner together, per plan: a key holder cannot presign past the plan's rate without bound. */
  private readonly linksPerPlan: Record<Plan, RateLimiterAbstract>;
  private readonly signups: RateLimiterAbstract;
  private readonly loginByIp: RateLimiterAbstract;
  /** Keyed by account and address together: failures elsewhere never lock out the owner. */
  private readonly loginByAccount: RateLimiterAbstract;

  constructor(
    private readonly config: Pick<
      Config,
      'plans' | 'publicRateLimit' | 'clientRateLimit' | 'signedUrlRateLimit' | 'signupRateLimit' | 'loginRateLimit' | 'rateLimitWindowSeconds'
    > &
      Partial<Pick<Config, 'redisKeyPrefix'>>,
    redis?: Redis,
  ) {
    const redisPrefix = config.redisKeyPrefix ?? 'pail:';
    const make = (keyPrefix: string, points: number, duration: number): RateLimiterAbstract =>
      redis
        ? new RateLimiterRedis({ storeClient: redis, keyPrefix: `${redisPrefix}${keyPrefix}`, points, duration, rejectIfRedisNotReady: true })
        : new RateLimiterMemory({ keyPrefix, points, duration });
    const WINDOW_SECONDS = config.rateLimitWindowSeconds;
    this.perPlan = {
      free: make('rl:free', config.plans.free.ratePerMinute, WINDOW_SECONDS),
      plus: make('rl:plus', config.plans.plus.ratePerMinute, WINDOW_SECONDS),
      pro: make('rl:pro', config.plans.pro.ratePerMinute, WINDOW_SECONDS),
      max: make('rl:max', config.plans.max.ratePerMinute, WINDOW_SECONDS),
    };
    this.publicIp = make('rl:ip', config.publicRateLimit, WINDOW_SECONDS);
    this.client = make('rl:client', config.clientRateLimit, WINDOW_SECONDS);
    this.signedUrls = make('rl:signed', config.signedUrlRateLimit, WINDOW_SECONDS);
    const links = (plan: Plan) => make(`rl:links:${plan}`, linksRate(config.plans[plan].ratePerMinute), WINDOW_SECONDS);
    this.linksPerPlan = { free: links('free'), plus: links('plus'), pro: links('pro'), max: links('max') };
    this.signups = make('signup:ip', config.signupRateLimit, SIGNUP_WINDOW_SECONDS);
    this.loginByIp = make('login:ip', config.loginRateLimit * 5, LOGIN_WINDOW_SECONDS);
    this.loginByAccount = make('login:account', config.loginRateLimit, LOGIN_WINDOW_SECONDS);
  }

  /**
   * Spends one request of the budget the principal names (domain/principal.ts):
   * a key's or an S3 signature's its owner's plan budget, a session's the
   * Client API budget, a share link's (a signed url, an S3 presigned url or
   * POST policy) the reader address's signed-url budget and one of the
   * owner's links' shared ceiling (SHARE_LINKS_PER_PLAN_RATE times the plan's
   * rate), nobody's the address's anonymous budget, which a refused
   * credential spends too. Throws 429 (with the budget) when it is gone.
   */
  spendFor(principal: Principal, ip: string): Promise<Budget> {
    switch (principal.budget) {
      case 'plan':
        return this.consumeUser(principal.user.id, planOf(principal.user));
      case 'client':
        return this.consumeClient(principal.user.id);
      case 'share-links':
        return this.spendLink(principal.user, ip);
      case 'address':
        return this.consumeIp(ip);
      case null:
        throw new Error('The operator spends no request budget');
    }
  }

  private async spendLink(owner: Pick<AccountRow, 'id' | 'plan'>, ip: string): Promise<Budget> {
    const plan = planOf(owner);
    await spend(this.linksPerPlan[plan], `u${owner.id}`, linksRate(this.config.plans[plan].ratePerMinute));
    return spend(this.signedUrls, ip, this.config.signedUrlRateLimit);
  }

  /** Spends one request of a user's budget; throws 429 (with the budget) when it is gone. */
  private consumeUser(userId: number, plan: Plan): Promise<Budget> {
    return spend(this.perPlan[plan], `u${userId}`, this.config.plans[plan].ratePerMinute);
  }

  private consumeIp(ip: string): Promise<Budget> {
    return spend(this.publicIp, ip, this.config.publicRateLimit);
  }

  /** Spends one request of a user's Client API budget. */
  private consumeClient(userId: number): Promise<Budget> {
    return spend(this.client, `u${userId}`, this.config.clientRateLimit);
  }

  /** Counts a sign-up from this address; 429 once the address has made its hour's worth. */
  async startSignup(ip: string): Promise<void> {
    await spend(this.signups, ip, this.config.signupRateLimit);
  }

  /**
   * Counts a login attempt as a failure before the password is checked, in one
   * atomic step per counter, so simultaneous guesses cannot all pass a check
   * made before any of them had failed. Throws 429 while the account or the
   * address has failed too often. A successful login gives its attempt back.
   */
  async startLogin(ip: string, email: string): Promise<void> {
    await spend(this.loginByIp, ip, this.config.loginRateLimit * 5);
    try {
      await spend(this.loginByAccount, accountFrom(email, ip), this.config.loginRateLimit);
    } catch (error) {
      // Refused for the account's sake: not a failure of the address.
      await guard(this.loginByIp.reward(ip, 1));
      throw error;
    }
  }

  async loginSucceeded(ip: string, email: string): Promise<void> {
    await Promise.all([guard(this.loginByAccount.delete(accountFrom(email, ip))), guard(this.loginByIp.reward(ip, 1))]);
  }
}

const accountFrom = (email: string, ip: string): string => `${ip} ${email}`;

async function spend(limiter: RateLimiterAbstract, key: string, limit: number): Promise<Budget> {
  try {
    const res = await limiter.consume(key);
    return { limit, remaining: res.remainingPoints, resetSeconds: Math.ceil(res.msBeforeNext / 1000) };
  } catch (rejection) {
    if (rejection instanceof RateLimiterRes) {
      const resetSeconds = Math.max(1, Math.ceil(rejection.msBeforeNext / 1000));
      const error = errors.rateLimited(resetSeconds);
      Object.assign(error.headers, budgetHeaders({ limit, remaining: 0, resetSeconds }));
      throw error;
    }
    throw errors.unavailable('Rate limiter unavailable, try again shortly');
  }
}

async function guard<T>(operation: Promise<T>): Promise<T> {
  try {
    return await operation;
  } catch {
    throw errors.unavailable('Rate limiter unavailable, try again shortly');
  }
}

export function budgetHeaders(budget: Budget): Record<string, string> {
  return {
    'ratelimit-limit': String(budget.limit),
    'ratelimit-remaining': String(budget.remaining),
    'ratelimit-reset': String(budget.resetSeconds),
  };
}
