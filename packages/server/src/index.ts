/** What the CLI and tests use from the server package: the commands' part (commands.ts), and the server itself. */
export * from './commands.js';
export { buildApp } from './app.js';
export { serve } from './main.js';
export { openDatabase, migrateToLatest } from './db/database.js';
