#!/usr/bin/env node
// Entry point of the `genserve` command. The CLI is TypeScript run through tsx; `server-only`
// (a marker that makes server modules fail in browser bundles) resolves to an empty module here.
import { register } from "node:module";
import { register as registerTsx } from "tsx/esm/api";

registerTsx();
register(
  "data:text/javascript," +
    encodeURIComponent(
      'export async function resolve(specifier, context, next) { if (specifier === "server-only") return { url: "data:text/javascript,", shortCircuit: true }; return next(specifier, context); }',
    ),
);
await import("../lib/cli/main.ts");
