/**
 * Shared pieces of the benchmark, one import for every script: starting servers
 * pinned to the server core (servers.mjs), talking to Pail's API to set up
 * users, keys, buckets and files (pail-api.mjs), running the load generator
 * and the stream client on the load core (load-children.mjs), sampling RSS and
 * CPU (process-stats.mjs), and what every script starts from (setup.mjs).
 */
export * from './setup.mjs';
export * from './servers.mjs';
export * from './pail-api.mjs';
export * from './load-children.mjs';
export * from './process-stats.mjs';
