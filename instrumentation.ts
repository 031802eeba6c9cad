/**
 * Next.js calls this once when the server starts: build genserve's runtime now, so that work that
 * must not wait for a first request (the callback delivery worker resuming due events) starts.
 */
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME === "nodejs") {
    const { getRuntime } = await import("./lib/server/runtime");
    // Serving starts after runs a previous process left running are recovered.
    await getRuntime().ready;
  }
}
