/**
 * What the dashboard can tell before sending a byte: the file is over the
 * bucket's `max_file_bytes`, its type is not one the bucket's `allowed_types`
 * take (as the browser names it: the server still reads the bytes), or it
 * does not fit in the space left under the storage cap. Refusing here saves
 * sending a file only to have it refused at the end.
 */
import { formatBytes } from './format';

export interface BucketLimitsView {
  name: string;
  max_file_bytes: number | null;
  allowed_types: string[] | null;
}

export interface Refusal {
  message: string;
  kind: 'storage-cap' | 'file-cap' | 'type' | 'name';
}

/** `image/png` against `image/*`, `image/png` or `*\/*`, ignoring case and parameters. */
export function typeAllowed(type: string, allowed: string[]): boolean {
  const actual = type.split(';')[0]!.trim().toLowerCase();
  return allowed.some((pattern) => {
    const p = pattern.trim().toLowerCase();
    if (p === '*/*' || p === actual) return true;
    return p.endsWith('/*') && actual.startsWith(p.slice(0, -1));
  });
}

export function bucketRefusal(bucket: BucketLimitsView, file: { size: number; type: string }): Refusal | null {
  if (bucket.max_file_bytes !== null && file.size > bucket.max_file_bytes) {
    return {
      kind: 'file-cap',
      message: `File too large: ${formatBytes(file.size)} is over the ${formatBytes(bucket.max_file_bytes)} limit of ${bucket.name}.`,
    };
  }
  // A file the browser cannot name (type '') goes on: the server reads its bytes.
  if (bucket.allowed_types !== null && file.type !== '' && !typeAllowed(file.type, bucket.allowed_types)) {
    return {
      kind: 'type',
      message: `File type not allowed: ${bucket.name} takes only ${bucket.allowed_types.join(', ')}, and this is ${file.type}.`,
    };
  }
  return null;
}

/** `needed` is what the file adds: its size, less the size of the file it replaces. */
export function capRefusal(needed: number, spaceLeft: number): Refusal | null {
  if (needed <= spaceLeft) return null;
  return {
    kind: 'storage-cap',
    message: `Storage limit exceeded: this needs ${formatBytes(needed)} and ${formatBytes(Math.max(0, spaceLeft))} is left.`,
  };
}

/** `report (1).pdf`, `report (2).pdf`, …: the first name not taken. Folders stay; the extension stays last. */
export function keepBothName(name: string, taken: (candidate: string) => boolean): string {
  const slash = name.lastIndexOf('/');
  const folder = name.slice(0, slash + 1);
  const base = name.slice(slash + 1);
  const dot = base.lastIndexOf('.');
  const stem = dot > 0 ? base.slice(0, dot) : base;
  const ext = dot > 0 ? base.slice(dot) : '';
  for (let n = 1; ; n++) {
    const candidate = `${folder}${stem} (${n})${ext}`;
    if (!taken(candidate)) return candidate;
  }
}
