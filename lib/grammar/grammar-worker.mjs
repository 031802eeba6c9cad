// Worker thread that compiles callers' JSON Schemas to GBNF (compile.ts). The compiler's work is
// bounded (rules, visits, grammar size), but a large schema still takes tens of milliseconds and a
// strange one may take longer: here it never blocks the server's event loop or a local-engine lane,
// and the pool (grammar-pool.ts) stops a compile that runs past its time budget. The compiler is
// TypeScript, so this thread registers tsx before loading it.
import { parentPort } from "node:worker_threads";
import "../workers/typescript.mjs";

const { compileGrammar, UnsatisfiableSchemaError } = await import("./compile.ts");

parentPort.on("message", (message) => {
  let result;
  try {
    result = { compiled: compileGrammar(message.schema) };
  } catch (error) {
    result = error instanceof UnsatisfiableSchemaError ? { unsatisfiable: String(error.message) } : { compilerError: String(error?.message ?? error) };
  }
  parentPort.postMessage({ id: message.id, ...result });
});
// Modules loaded: job clocks start from here (see lib/workers/pool.ts).
parentPort.postMessage({ id: 0, ready: true });
