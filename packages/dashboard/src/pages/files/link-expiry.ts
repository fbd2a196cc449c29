/**
 * How long a share link lives. The server signs links for 1 second to 7 days
 * (decisions.md, "Signed urls"), so every choice is turned into seconds and
 * checked against that range before asking.
 */
export const HOUR = 3600;
export const DAY = 24 * HOUR;
export const WEEK = 7 * DAY;
export const MIN_LINK_SECONDS = 1;
export const MAX_LINK_SECONDS = WEEK;

export type LinkPreset = 'hour' | 'day' | 'week' | 'custom';
export type CustomKind = 'hours' | 'date';

export interface LinkExpiry {
  preset: LinkPreset;
  customKind: CustomKind;
  /** As typed in the number field; decimals allowed (1.5 hours). */
  hours: string;
  /** An `<input type="datetime-local">` value, in local time. */
  date: string;
}

export const DEFAULT_LINK_EXPIRY: LinkExpiry = { preset: 'day', customKind: 'hours', hours: '2', date: '' };

const PRESET_SECONDS: Record<Exclude<LinkPreset, 'custom'>, number> = { hour: HOUR, day: DAY, week: WEEK };

const OUT_OF_RANGE = 'A link can last from 1 second to 7 days (168 hours).';

/** The lifetime in whole seconds, or why the choice cannot be used. */
export function linkLifetime(expiry: LinkExpiry, now = Date.now()): { seconds: number } | { problem: string } {
  if (expiry.preset !== 'custom') return { seconds: PRESET_SECONDS[expiry.preset] };
  let seconds: number;
  if (expiry.customKind === 'hours') {
    const hours = Number(expiry.hours);
    if (expiry.hours.trim() === '' || !Number.isFinite(hours)) return { problem: 'Enter a number of hours, e.g. 2 or 0.5.' };
    seconds = Math.round(hours * HOUR);
  } else {
    // datetime-local values have no zone: `new Date()` reads them as local time, as the user meant.
    const at = new Date(expiry.date).getTime();
    if (expiry.date === '' || Number.isNaN(at)) return { problem: 'Pick a date and time.' };
    if (at <= now) return { problem: 'Pick a time in the future.' };
    seconds = Math.round((at - now) / 1000);
  }
  if (seconds < MIN_LINK_SECONDS || seconds > MAX_LINK_SECONDS) return { problem: OUT_OF_RANGE };
  return { seconds };
}

/** A `datetime-local` value (`2026-05-01T14:30`) for a moment, in local time. */
export function toLocalInput(ms: number): string {
  const date = new Date(ms);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}
