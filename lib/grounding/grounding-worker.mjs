// Worker thread that aligns a generated object with its sources (align.ts). Aligning a 300-page
// PDF's text takes a while: here it never blocks the server's event loop, the aligner stops itself
// at its budget, and the pool (grounding-pool.ts) terminates it if it still runs past its time
// limit. The aligner is TypeScript, so this thread registers tsx before loading it.
import { parentPort } from "node:worker_threads";
import "../workers/typescript.mjs";

const { alignObject } = await import("./align.ts");

parentPort.on("message", (message) => {
  let result;
  try {
    result = { leaves: alignObject(message.object, message.docs, message.budget) };
  } catch (error) {
    result = { failed: String(error?.message ?? error) };
  }
  parentPort.postMessage({ id: message.id, ...result });
});
// Modules loaded: job clocks start from here (see lib/workers/pool.ts).
parentPort.postMessage({ id: 0, ready: true });
