#!/usr/bin/env node
// `npm run fuzz:http -- --minutes N [--seed S]`: the hostile-input suite (test/http/fuzz.test.ts)
// for N minutes instead of the ~45 s it gets in `npm test`. A failure prints the shrunk request and
// the seed that reproduces it.
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import path from "node:path";
import { parseArgs } from "node:util";

const { values } = parseArgs({ options: { minutes: { type: "string", default: "5" }, seed: { type: "string" } } });
const minutes = Number(values.minutes);
if (!Number.isFinite(minutes) || minutes <= 0) {
  process.stderr.write(`fuzz:http: --minutes must be a positive number (got "${values.minutes}")\n`);
  process.exit(2);
}
const root = path.resolve(import.meta.dirname, "..");
const vitest = path.join(path.dirname(createRequire(path.join(root, "package.json")).resolve("vitest/package.json")), "vitest.mjs");
const env = { ...process.env, GENSERVE_FUZZ_MS: String(Math.round(minutes * 60_000)), ...(values.seed ? { GENSERVE_FUZZ_SEED: values.seed } : {}) };
const child = spawn(process.execPath, [vitest, "run", "test/http/fuzz.test.ts"], { cwd: root, env, stdio: "inherit" });
child.on("exit", (code) => process.exit(code ?? 1));
