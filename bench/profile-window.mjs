/**
 * node bench/profile-window.mjs PROFILE.cpuprofile START_US END_US — where a V8 CPU profile's
 * samples in a window of time went, by part of genserve: each sample goes to the innermost frame of
 * its stack that a part owns (idle, garbage collection and V8's own time apart). The window is on
 * the monotonic clock the profile's timestamps use (bench:suites prints its evaluation's window).
 * DETAIL=prefix lists the busiest functions of the parts whose name starts with it.
 */
import { readFileSync } from "node:fs";

const [file, from, to] = process.argv.slice(2);
if (!file || !from || !to) {
  console.error("usage: node bench/profile-window.mjs PROFILE.cpuprofile START_US END_US");
  process.exit(2);
}
const profile = JSON.parse(readFileSync(file, "utf8"));
const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of profile.nodes) for (const child of n.children ?? []) parent.set(child, n.id);
/** A sample's frames, innermost first. */
const stackOf = (id) => {
  const frames = [];
  for (let at = id; at !== undefined; at = parent.get(at)) frames.push(nodes.get(at).callFrame);
  return frames;
};

const SPECIAL = { "(idle)": "idle", "(garbage collector)": "garbage collection", "(program)": "V8 (program)" };
const PARTS = [
  ["the provider call (AI SDK, undici, lib/models)", /@ai-sdk|undici|\/lib\/models\//],
  ["storage (lib/store, better-sqlite3, pg)", /\/lib\/store\/|better-sqlite3|\/node_modules\/pg/],
  ["schema validation (lib/schema, workers)", /\/lib\/schema\/|\/lib\/workers\//],
  ["evaluations (lib/evals)", /\/lib\/evals\//],
  ["the run pipeline (lib/runs, keys, catalog, delivery)", /\/lib\/(runs|keys|catalog|delivery|ids|json)/],
  ["HTTP (lib/http, the adapter, node:http)", /\/lib\/http\/|hono|_http_|node:http/],
];
const partOf = (frames) => {
  if (Object.hasOwn(SPECIAL, frames[0].functionName)) return SPECIAL[frames[0].functionName];
  for (const frame of frames) for (const [name, pattern] of PARTS) if (pattern.test(frame.url)) return name;
  return "other (Node internals, libraries)";
};

const totals = new Map();
const detail = new Map();
let time = profile.startTime;
let windowUs = 0;
for (let i = 0; i < profile.samples.length; i++) {
  time += profile.timeDeltas[i];
  if (time < Number(from) || time > Number(to)) continue;
  const spent = profile.timeDeltas[i + 1] ?? 0;
  const frames = stackOf(profile.samples[i]);
  const part = partOf(frames);
  totals.set(part, (totals.get(part) ?? 0) + spent);
  windowUs += spent;
  if (process.env.DETAIL && part.startsWith(process.env.DETAIL)) {
    const key = `${frames[0].functionName || "(anonymous)"} ${frames[0].url.replace(/.*\/(node_modules|lib)\//, "$1/")}:${frames[0].lineNumber + 1}`;
    detail.set(key, (detail.get(key) ?? 0) + spent);
  }
}
console.log(`${(windowUs / 1000).toFixed(0)} ms in the window`);
for (const [part, us] of [...totals].sort((a, b) => b[1] - a[1])) {
  console.log(`${part.padEnd(56)} ${(us / 1000).toFixed(0).padStart(7)} ms ${((100 * us) / windowUs).toFixed(1).padStart(5)}%`);
}
for (const [key, us] of [...detail].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(`${(us / 1000).toFixed(0).padStart(7)} ms  ${key}`);
