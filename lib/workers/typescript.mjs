// Lets Node run genserve's TypeScript directly, in the main thread (bin/register.mjs) and in worker
// threads whose code is TypeScript (the grammar compiler's worker): tsx compiles it, and
// `server-only` (a marker that makes server modules fail in browser bundles) resolves to an empty
// module outside Next.js. Loader hooks are per thread, so each worker imports this module first.
import { register } from "node:module";
import { register as registerTsx } from "tsx/esm/api";

registerTsx();
register(
  "data:text/javascript," +
    encodeURIComponent(
      'export async function resolve(specifier, context, next) { if (specifier === "server-only") return { url: "data:text/javascript,", shortCircuit: true }; return next(specifier, context); }',
    ),
);
