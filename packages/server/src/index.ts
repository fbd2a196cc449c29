/** What the CLI and tests use from the server package. */
export { buildApp } from './app.js';
export { loadConfig, ConfigError, type Config } from './config.js';
export { serve, configOrExit } from './main.js';
export { openDatabase, migrateToLatest } from './db/database.js';
export type { Db } from './db/schema.js';
export { listUsers } from './db/repositories/users.js';
export { openCommandServices, s3CredentialSealer, type CommandServices } from './services.js';
export { createUser, findUser, setPlan, userView, userWithHoldings, planOf } from './domain/users.js';
export { cancelUnfinishedUpload, listUnfinishedUploads } from './domain/unfinished-uploads.js';
export { operatorFor } from './domain/principal.js';
export { createApiKey, listApiKeys, revokeApiKey } from './domain/api-keys.js';
export { AppError } from './domain/errors.js';
export { collectGarbage } from './domain/garbage-collection.js';
export { expireMultipartUploads } from './domain/multipart-expiry.js';
export { expireResumableUploads, RESUMABLE_IDLE_SECONDS } from './domain/resumable-uploads.js';
