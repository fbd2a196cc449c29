/**
 * AppError: a refusal (4xx) is built without a stack trace (it is never read,
 * and capturing one was a tenth of the CPU of a 429), a fault (5xx) keeps its
 * stack for the log, and the process-wide stack limit is left as it was.
 */
import { describe, expect, it } from 'vitest';
import { AppError, errors } from '../src/domain/errors.js';

const frames = (error: Error) => (error.stack ?? '').split('\n').filter((line) => line.trim().startsWith('at ')).length;

describe('AppError stacks', () => {
  it('refusals carry their status and message but no stack frames', () => {
    for (const error of [errors.rateLimited(3), errors.fileNotFound(), errors.unauthorized(), errors.validation('bad')]) {
      expect(error).toBeInstanceOf(AppError);
      expect(error.status).toBeGreaterThanOrEqual(400);
      expect(error.status).toBeLessThan(500);
      expect(error.stack).toContain(error.message);
      expect(frames(error)).toBe(0);
    }
    expect(errors.rateLimited(3).headers).toEqual({ 'retry-after': '3' });
  });

  it('faults keep their stack, and Error.stackTraceLimit is restored', () => {
    const before = Error.stackTraceLimit;
    errors.notFound();
    expect(Error.stackTraceLimit).toBe(before);
    const fault = errors.unavailable('Rate limiter unavailable, try again shortly');
    expect(fault.status).toBe(503);
    expect(frames(fault)).toBeGreaterThan(0);
    expect(frames(new Error('plain'))).toBeGreaterThan(0);
  });
});
