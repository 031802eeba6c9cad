// Lets Node run genserve's TypeScript directly: tsx compiles it, and `server-only` (a marker that
// makes server modules fail in browser bundles) resolves to an empty module outside Next.js.
import { register } from "node:module";
import { register as registerTsx } from "tsx/esm/api";

registerTsx();
register(
  "data:text/javascript," +
    encodeURIComponent(
      'export async function resolve(specifier, context, next) { if (specifier === "server-only") return { url: "data:text/javascript,", shortCircuit: true }; return next(specifier, context); }',
    ),
);
