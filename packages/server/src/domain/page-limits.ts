/**
 * `?limit=` of every paged listing (files, trash, a file's versions, the
 * audit log): query strings are text and not coerced (app.ts), so it is read
 * here once, with one message for anything but a whole number in range.
 */
import { errors } from './errors.js';

export function pageLimit(raw: string | undefined, max: number, fallback = max): number {
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d{1,7}$/.test(raw) || Number(raw) < 1 || Number(raw) > max) throw errors.validation(`limit must be a whole number from 1 to ${max}`);
  return Number(raw);
}
