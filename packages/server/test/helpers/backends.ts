/**
 * Which backends a test server uses. PAIL_TEST_BACKEND unset (or `embedded`):
 * SQLite and files in DATA_DIR. Other combinations are added by the scale-out
 * suites.
 */
export interface BackendEnv {
  env: Record<string, string>;
  cleanup(): Promise<void>;
}

export async function backendEnv(): Promise<BackendEnv> {
  return { env: {}, async cleanup() {} };
}
