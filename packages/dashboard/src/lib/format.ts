import { formatBytes } from '@pail/shared/plans';

export { formatBytes };

const dateFormat = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: 'numeric' });
const dateTimeFormat = new Intl.DateTimeFormat(undefined, {
  year: 'numeric',
  month: 'short',
  day: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
});

function parse(iso: string): Date | null {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? null : date;
}

export function formatDate(iso: string): string {
  const date = parse(iso);
  return date ? dateFormat.format(date) : '—';
}

export function formatDateTime(iso: string | null | undefined): string {
  if (!iso) return 'Never';
  const date = parse(iso);
  return date ? dateTimeFormat.format(date) : '—';
}

export function formatSpeed(bytesPerSecond: number): string {
  if (!Number.isFinite(bytesPerSecond) || bytesPerSecond <= 0) return '—';
  return `${formatBytes(Math.round(bytesPerSecond))}/s`;
}

export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '';
  if (seconds < 1) return 'less than a second';
  if (seconds < 60) return `${Math.round(seconds)} s`;
  const minutes = Math.floor(seconds / 60);
  const rest = Math.round(seconds % 60);
  if (minutes < 60) return `${minutes} min ${rest} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

export function formatPercent(fraction: number): string {
  if (!Number.isFinite(fraction)) return '0%';
  const pct = fraction * 100;
  if (pct > 0 && pct < 1) return '<1%';
  return `${Math.round(pct)}%`;
}

export function pluralize(count: number, one: string, many = `${one}s`): string {
  return `${count.toLocaleString()} ${count === 1 ? one : many}`;
}

/** A short, readable type: "PNG image", "PDF", "text/plain" stays as is. */
export function describeType(contentType: string): string {
  const base = contentType.split(';')[0]?.trim() ?? '';
  if (!base) return 'Unknown';
  if (base === 'application/pdf') return 'PDF';
  if (base === 'application/octet-stream') return 'Binary';
  if (base === 'application/json') return 'JSON';
  if (base === 'application/zip') return 'ZIP archive';
  const [kind, sub] = base.split('/');
  if (kind === 'image' && sub) return `${sub.replace(/\+xml$/, '').toUpperCase()} image`;
  if (kind === 'video' && sub) return `${sub.toUpperCase()} video`;
  if (kind === 'audio' && sub) return `${sub.toUpperCase()} audio`;
  if (kind === 'text' && sub === 'plain') return 'Text';
  if (kind === 'text' && sub) return `${sub.toUpperCase()} text`;
  return base;
}
