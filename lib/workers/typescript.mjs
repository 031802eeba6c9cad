// Lets Node run genserve's TypeScript directly, in the main thread (bin/register.mjs) and in worker
// threads whose code is TypeScript (the grammar compiler's worker): tsx compiles it, and
// `server-only` (a marker that makes server modules fail in browser bundles) resolves to an empty
// module outside Next.js. Loader hooks are per thread, so each worker imports this module first.
import { register } from "node:module";
import { fileURLToPath } from "node:url";
import { register as registerTsx } from "tsx/esm/api";

// genserve's own tsconfig (its `@/` paths), wherever the command runs from: not one in the user's directory.
registerTsx({ tsconfig: fileURLToPath(new URL("../../tsconfig.json", import.meta.url)) });
register(
  "data:text/javascript," +
    encodeURIComponent(
      'export async function resolve(specifier, context, next) { if (specifier === "server-only") return { url: "data:text/javascript,", shortCircuit: true }; return next(specifier, context); }',
    ),
);
