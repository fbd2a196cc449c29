/** Parsers for command-line values; a bad value is a usage error (exit 2). */
import { PERMISSIONS, type Permission } from '@pail/shared';
import { InvalidArgumentError } from 'commander';

export function wholeNumber(value: string): number {
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value))) {
    throw new InvalidArgumentError('must be a whole number.');
  }
  return Number(value);
}

export function positiveId(value: string): number {
  const id = wholeNumber(value);
  if (id < 1) throw new InvalidArgumentError('must be a positive whole number.');
  return id;
}

/** `--bucket 3 --bucket 5`: each value appended to the ones before it. */
export function collectIds(value: string, previous: number[] = []): number[] {
  return [...previous, positiveId(value)];
}

/**
 * `--permissions read,write`: a non-empty list of the key permissions, each
 * once. Checked here (a usage error) because the API checks it in its request
 * schema, which the CLI does not go through.
 */
export function permissionList(value: string): Permission[] {
  const names = value.split(',').map((name) => name.trim());
  const unknown = names.find((name) => !(PERMISSIONS as readonly string[]).includes(name));
  if (unknown !== undefined) throw new InvalidArgumentError(`must be a comma-separated list of ${PERMISSIONS.join(', ')}; got "${unknown}".`);
  if (new Set(names).size !== names.length) throw new InvalidArgumentError('must name each permission once.');
  return names as Permission[];
}

/** The API's own bound on `expires_in` (a hundred years): beyond it a date cannot be written. */
const MAX_EXPIRY_SECONDS = 100 * 365 * 24 * 3600;

export function expirySeconds(value: string): number {
  const seconds = positiveId(value);
  if (seconds > MAX_EXPIRY_SECONDS) throw new InvalidArgumentError(`must be at most ${MAX_EXPIRY_SECONDS} (100 years).`);
  return seconds;
}
