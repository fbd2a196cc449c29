/**
 * Imported first by main.ts. libuv sizes its thread pool once, at the first
 * file operation; with the default of four threads, the fsyncs of parallel
 * uploads queue behind each other. An operator's own setting wins.
 */
process.env.UV_THREADPOOL_SIZE ??= '16';
export {};
