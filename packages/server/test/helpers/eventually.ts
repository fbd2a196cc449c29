/** Waiting for what a server records after it answers: polled until true, never a fixed sleep (a loaded CI host stretches those). */

/** Polls `check` until it returns true or the time is up. */
export async function eventually(check: () => Promise<boolean>, timeoutMs = 15_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
