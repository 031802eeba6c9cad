/**
 * Waits for the next UTC minute when the current one has under `marginMs` left: per-minute limits
 * count in fixed windows, and a test that makes a few requests must not straddle two of them.
 */
export async function awayFromMinuteEdge(marginMs = 15_000): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < marginMs) await new Promise((resolve) => setTimeout(resolve, left + 50));
}
