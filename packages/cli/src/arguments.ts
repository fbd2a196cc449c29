/** Parsers for command-line values; a bad value is a usage error (exit 2). */
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
