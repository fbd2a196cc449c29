/**
 * Whether an error means a backing store could not be reached (PostgreSQL
 * down or restarting, an S3 endpoint or Redis gone), rather than a fault of
 * the request or of Pail: such requests answer 503 and may be retried.
 */
const CONNECT_CODES = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
/** What node-postgres says when a connection dies or never comes. */
const PG_CONNECTION_LOST = /^(Connection terminated|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error)/;

export function isStoreUnreachable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const { code, syscall } = error as NodeJS.ErrnoException;
  if (syscall === 'connect' && code !== undefined && (CONNECT_CODES.has(code) || code === 'ETIMEDOUT' || code === 'ECONNRESET')) return true;
  if (code !== undefined && CONNECT_CODES.has(code)) return true;
  // PostgreSQL's connection-exception class (08) and "shutting down / cannot connect now" (57P01-57P03).
  if (typeof code === 'string' && (/^08[0-9A-Z]{3}$/.test(code) || /^57P0[1-3]$/.test(code))) return true;
  if (PG_CONNECTION_LOST.test(error.message)) return true;
  // The AWS SDK's own connection and socket timeouts.
  return error.name === 'TimeoutError' && (error as { $metadata?: unknown }).$metadata !== undefined;
}
