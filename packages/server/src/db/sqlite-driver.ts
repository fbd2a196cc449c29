/**
 * The SQLite driver for the Node that runs Pail. better-sqlite3 12 is built
 * against V8's own API and aborts the process at teardown on Node 24.19 and
 * later (its statements' finalizers run after the environment is gone);
 * better-sqlite3 13 is built on Node-API and ships prebuilt binaries, but
 * needs Node 22 or later. So Node 20 loads 12 and newer Nodes load 13 (the
 * `better-sqlite3-napi` alias); both have the same API.
 */
import type BetterSqlite3 from 'better-sqlite3';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const nodeMajor = Number(process.versions.node.split('.')[0]);

/** The module name of the driver for this Node. */
const DRIVER = nodeMajor >= 22 ? 'better-sqlite3-napi' : 'better-sqlite3';

/** Its path, for the checkpoint worker thread, which loads it itself. */
export const sqliteDriverPath: string = require.resolve(DRIVER);

const SQLite = require(DRIVER) as typeof BetterSqlite3;
export default SQLite;
