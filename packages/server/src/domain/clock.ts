/** ISO 8601 timestamps, the one format stored and returned. */
export const nowIso = (): string => new Date().toISOString();
