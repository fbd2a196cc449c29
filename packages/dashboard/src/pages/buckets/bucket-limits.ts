/**
 * The bucket settings form's fields and the limits they stand for: a size in
 * KiB, MiB or GiB (empty: no limit), and types as a comma-separated list
 * (empty: any type).
 */
import type { BucketLimits } from '../../api/buckets';

export const SIZE_UNITS = { KiB: 1024, MiB: 1024 ** 2, GiB: 1024 ** 3 } as const;
export type SizeUnit = keyof typeof SIZE_UNITS;

export interface LimitsForm {
  size: string;
  unit: SizeUnit;
  types: string;
}

export function formOf(limits: BucketLimits): LimitsForm {
  const bytes = limits.max_file_bytes;
  // The largest unit that shows the limit as a whole number.
  const unit = (['GiB', 'MiB', 'KiB'] as const).find((u) => bytes !== null && bytes % SIZE_UNITS[u] === 0) ?? 'MiB';
  return {
    size: bytes === null ? '' : String(bytes % SIZE_UNITS[unit] === 0 ? bytes / SIZE_UNITS[unit] : +(bytes / SIZE_UNITS[unit]).toFixed(3)),
    unit,
    types: limits.allowed_types?.join(', ') ?? '',
  };
}

/** The limits a form asks for, or the reason the size cannot be one. Types are checked by the server, which names a bad one. */
export function limitsOf(form: LimitsForm): { limits: BucketLimits } | { problem: string } {
  const size = form.size.trim();
  let maxFileBytes: number | null = null;
  if (size !== '') {
    const value = Number(size);
    if (!Number.isFinite(value) || value <= 0) return { problem: 'Enter a size above 0, or leave it empty for no limit' };
    maxFileBytes = Math.max(1, Math.round(value * SIZE_UNITS[form.unit]));
  }
  const types = form.types
    .split(/[\s,]+/)
    .map((t) => t.trim().toLowerCase())
    .filter(Boolean);
  return { limits: { max_file_bytes: maxFileBytes, allowed_types: types.length > 0 ? types : null } };
}
