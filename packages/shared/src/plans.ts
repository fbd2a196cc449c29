/** Plans and their defaults (decisions.md, "Plans, storage caps, rate limits"). */
export const PLANS = ['free', 'plus', 'pro', 'max'] as const;
export type Plan = (typeof PLANS)[number];

const GiB = 1024 ** 3;

export const DEFAULT_PLAN_LIMITS: Record<Plan, { storageBytes: number; ratePerMinute: number }> = {
  free: { storageBytes: 1 * GiB, ratePerMinute: 100 },
  plus: { storageBytes: 10 * GiB, ratePerMinute: 200 },
  pro: { storageBytes: 100 * GiB, ratePerMinute: 500 },
  max: { storageBytes: 1024 * GiB, ratePerMinute: 1500 },
};

export function isPlan(value: unknown): value is Plan {
  return typeof value === 'string' && (PLANS as readonly string[]).includes(value);
}

/** "1 GiB", "512 MiB", "1.5 KiB": how caps are named in messages and the dashboard. */
export function formatBytes(bytes: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  if (unit === 0) return `${bytes} ${bytes === 1 ? 'byte' : 'bytes'}`;
  const rounded = Math.round(value * 10) / 10;
  return `${Number.isInteger(rounded) ? rounded.toFixed(0) : rounded.toFixed(1)} ${units[unit]}`;
}
