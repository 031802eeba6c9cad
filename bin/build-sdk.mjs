#!/usr/bin/env node
// Builds the client package (genserve/client, genserve/react, genserve/ai) into dist/sdk/: tsc with
// tsconfig.sdk.json (ESM and declarations), then every relative import given its ".js", which
// Node's ESM resolution needs and the sources (written for bundlers) leave out.
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";

const root = path.resolve(import.meta.dirname, "..");
const out = path.join(root, "dist", "sdk");
rmSync(out, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
execFileSync(process.execPath, [tsc, "-p", path.join(root, "tsconfig.sdk.json")], { stdio: "inherit", cwd: root });

const files = (dir) => readdirSync(dir).flatMap((name) => (statSync(path.join(dir, name)).isDirectory() ? files(path.join(dir, name)) : [path.join(dir, name)]));
const RELATIVE = /(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(["'])(\.{1,2}\/[^"']*)\2/g;
let rewritten = 0;
for (const file of files(out).filter((f) => f.endsWith(".js") || f.endsWith(".d.ts"))) {
  const text = readFileSync(file, "utf8");
  const next = text.replace(RELATIVE, (whole, lead, quote, spec) => {
    if (/\.(m?js|json)$/.test(spec)) return whole;
    const target = path.resolve(path.dirname(file), spec);
    const resolved = existsSync(`${target}.js`) || existsSync(`${target}.d.ts`) ? `${spec}.js` : existsSync(path.join(target, "index.js")) ? `${spec}/index.js` : null;
    if (resolved === null) throw new Error(`${path.relative(root, file)}: cannot resolve ${spec}`);
    rewritten++;
    return `${lead}${quote}${resolved}${quote}`;
  });
  if (next !== text) writeFileSync(file, next);
}
console.log(`genserve client package built in ${path.relative(root, out)}/ (${rewritten} imports given their extension)`);
