/**
 * Which files the dashboard can show inline, decided by MIME type then
 * extension. PDFs, video and audio play from the file's own URL in the
 * browser's viewer and player (which ask for ranges, so seeking works);
 * images and text are fetched whole.
 */
export type PreviewKind = 'image' | 'text' | 'pdf' | 'video' | 'audio' | null;

const TEXT_TYPES = new Set([
  'application/json',
  'application/xml',
  'application/javascript',
  'application/x-javascript',
  'application/x-yaml',
  'application/yaml',
  'application/toml',
  'application/x-sh',
  'application/sql',
]);

const TEXT_EXTENSIONS = /\.(txt|md|markdown|csv|tsv|json|ya?ml|toml|ini|log|xml|html?|css|js|mjs|cjs|ts|tsx|jsx|py|rb|go|rs|java|c|h|cpp|sh|sql|env)$/i;
const IMAGE_EXTENSIONS = /\.(png|jpe?g|gif|webp|avif|bmp|ico|svg)$/i;
const VIDEO_EXTENSIONS = /\.(mp4|m4v|webm|ogv|mov)$/i;
const AUDIO_EXTENSIONS = /\.(mp3|m4a|aac|wav|ogg|oga|opus|flac)$/i;

export function previewKind(contentType: string, filename: string): PreviewKind {
  const type = (contentType.split(';')[0] ?? '').trim().toLowerCase();
  if (type.startsWith('image/')) return 'image';
  if (type === 'application/pdf') return 'pdf';
  if (type.startsWith('video/')) return 'video';
  if (type.startsWith('audio/')) return 'audio';
  if (type.startsWith('text/') || TEXT_TYPES.has(type) || type.endsWith('+json') || type.endsWith('+xml')) {
    return 'text';
  }
  if (type === '' || type === 'application/octet-stream') {
    if (IMAGE_EXTENSIONS.test(filename)) return 'image';
    if (/\.pdf$/i.test(filename)) return 'pdf';
    if (VIDEO_EXTENSIONS.test(filename)) return 'video';
    if (AUDIO_EXTENSIONS.test(filename)) return 'audio';
    if (TEXT_EXTENSIONS.test(filename)) return 'text';
  }
  return null;
}

/** Files larger than these are not fetched for preview; the user can download them. The others stream. */
export const PREVIEW_LIMITS: Partial<Record<Exclude<PreviewKind, null>, number>> = {
  image: 25 * 1024 * 1024,
  text: 2 * 1024 * 1024,
};

/** Kinds shown from the file's own URL rather than fetched into the page. */
export const streamsFromUrl = (kind: PreviewKind) => kind === 'pdf' || kind === 'video' || kind === 'audio';
