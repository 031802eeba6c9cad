// Worker thread that compiles and runs callers' JSON Schemas with ajv (ajv-engine.mjs). Compiling a
// large schema takes hundreds of milliseconds of synchronous work (code generation), and a pattern
// can backtrack for ever on a hostile value; doing it here keeps the server's event loop free for
// other callers, and lets the pool (schema-worker.ts) terminate a worker that runs past its time
// limit. Plain JavaScript so that Node loads it as it is, from the package, under both the CLI and
// the Next.js server bundle.
import { parentPort } from "node:worker_threads";
import { createValidators } from "./ajv-engine.mjs";

const validators = createValidators();

// Screening a large schema (inspect.ts, TypeScript shared with the server): loaded on first use, so a
// worker that never sees a large schema never loads the TypeScript loader.
let inspector;
async function inspect({ text, schema, limits, base, topLevelRule }) {
  inspector ??= import("../workers/typescript.mjs").then(() => import("./inspect.ts"));
  const { inspectSchema } = await inspector;
  return { inspection: inspectSchema(text === undefined ? schema : JSON.parse(text), limits, { base, topLevelRule, json: text }) };
}

parentPort.on("message", async (message) => {
  let result;
  try {
    if (message.op === "configure") {
      validators.configure(message.capacity);
      result = { ok: true };
    } else if (message.op === "compile") result = validators.compile(message);
    else if (message.op === "inspect") result = await inspect(message);
    else result = validators.validate(message);
  } catch (error) {
    result = { failure: String(error?.message ?? error) };
  }
  parentPort.postMessage({ id: message.id, ...result });
});
