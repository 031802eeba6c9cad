/**
 * npm run bench:page — what a person's browser pays: Chromium (Playwright, the system's) against
 * the built server and the fake upstream, both on loopback.
 *
 * 1. Cold load (empty cache, 1280×720) of the playground (signed in: the schema editor ready), the
 *    runs page and the docs: bytes transferred (headers and bodies, as Chromium counts them),
 *    responses, how many were compressed, and the time until the page is ready.
 * 2. A 4,000-item object streamed in the playground (about 250 KB of JSON in 8-byte deltas): the
 *    server's own time to stream it (read by this process, like curl), the page's time to "Done",
 *    long tasks (count, total, max, from a PerformanceObserver) and the latency of typing into the
 *    Input box while it streams (Event Timing: from the key press to the next paint). And what the
 *    page's main thread spent while it streamed, from Chromium's own counters (CDP
 *    Performance.getMetrics in the thread-time domain, read at Run and at Done): its CPU time, and
 *    the CPU time of script, style and layout (thread time: what does not grow with the machine's
 *    load, unlike wall-clock durations), layouts, and the output's
 *    commits (a MutationObserver on the output: one callback per task that changed it) and the
 *    nodes they inserted, so the
 *    cost per drawn batch can be compared between builds on a busy machine.
 *
 * `--root DIR` runs another checkout's build (the baseline, measured in the same session).
 */
import path from "node:path";
import { chromium, type Page } from "@playwright/test";
import { LONG_LIST_SCHEMA, longList, longListMarker, longListWhenAsked } from "../test/helpers/fake-upstream";

const rootArg = process.argv.indexOf("--root");
const ROOT = rootArg > 0 ? path.resolve(process.argv[rootArg + 1]!) : path.resolve(import.meta.dirname, "..");
const helpers = (name: string) => import(path.join(ROOT, "test", "helpers", name));
const { startFakeUpstream } = (await helpers("fake-upstream.ts")) as typeof import("../test/helpers/fake-upstream");
const { startGenserve, tempDir, writeConfig } = (await helpers("genserve.ts")) as typeof import("../test/helpers/genserve");
const { testConfig } = (await helpers("config.ts")) as typeof import("../test/helpers/config");

// The long list and its schema come from this checkout's fake upstream (the tool, not what is measured):
// a baseline checkout (--root) may not have them.
const ITEMS = 4_000;
const MARKER = longListMarker(ITEMS);
const big = JSON.stringify(longList(ITEMS));
const SCHEMA = LONG_LIST_SCHEMA;

const upstream = await startFakeUpstream({ record: false });
upstream.respondWith(longListWhenAsked());
const dir = tempDir("genserve-bench-page-");
// A workflow with room for the long stream on a busy machine (the test config's have a 60 s deadline).
const config = testConfig(upstream.url).replace("workflows:\n", "workflows:\n  long-list:\n    description: A long list\n    model: fast\n    retries: 0\n    timeoutMs: 900000\n");
const server = await startGenserve({ configFile: writeConfig(dir, config), dataDir: path.join(dir, "data"), logLevel: "warn" });
const key = server.adminKey!;
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});

interface Load {
  page: string;
  bytes: number;
  responses: number;
  compressed: number;
  readyMs: number;
}

/** A fresh browser context (nothing cached), signed in through sessionStorage as the sign-in form would. */
async function freshPage(): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
  await context.addInitScript((k) => sessionStorage.setItem("genserve.apiKey", k), key);
  return context.newPage();
}

async function coldLoad(name: string, url: string, ready: (page: Page) => Promise<unknown>): Promise<Load> {
  const page = await freshPage();
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Network.enable");
  let bytes = 0;
  let responses = 0;
  let compressed = 0;
  cdp.on("Network.loadingFinished", (e) => void (bytes += e.encodedDataLength));
  cdp.on("Network.responseReceived", (e) => {
    responses++;
    const headers = Object.fromEntries(Object.entries(e.response.headers).map(([k, v]) => [k.toLowerCase(), v]));
    if (headers["content-encoding"]) compressed++;
  });
  const start = Date.now();
  await page.goto(url);
  await ready(page);
  const readyMs = Date.now() - start;
  await page.waitForLoadState("networkidle");
  await page.context().close();
  return { page: name, bytes, responses, compressed, readyMs };
}

/** The server's own time to stream the object to a reader that takes every event as it comes. */
async function serverStream(): Promise<{ ms: number; events: number; bytes: number }> {
  const start = Date.now();
  const res = await fetch(`${server.url}/api/v1/stream/object`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "Api-Key": key },
    body: JSON.stringify({ workflowSlug: "long-list", input: `Make the list. ${MARKER}`, schema: SCHEMA }),
  });
  if (!res.ok || !res.body) throw new Error(`stream/object answered ${res.status}: ${await res.text()}`);
  let bytes = 0;
  let text = "";
  const decoder = new TextDecoder();
  const reader = res.body.getReader();
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
    bytes += chunk.value.byteLength;
    text += decoder.decode(chunk.value, { stream: true });
  }
  const events = text.split("\n\n").filter((e) => e.trim() && !e.startsWith(":")).length;
  if (!text.includes("event: done")) throw new Error(`the stream did not end with done: ${text.slice(-300)}`);
  return { ms: Date.now() - start, events, bytes };
}

/** Chromium's counters for the page's main thread (CDP Performance.getMetrics, thread time): durations in seconds, counts. */
const METRICS = ["ThreadTime", "TaskDuration", "ScriptDuration", "RecalcStyleDuration", "LayoutDuration", "LayoutCount"] as const;
type Metrics = Record<(typeof METRICS)[number], number>;

interface PageRun {
  ms: number;
  serverMs: number;
  longTasks: number;
  longTotal: number;
  longMax: number;
  over200: number;
  inputMax: number;
  inputMedian: number;
  inputEvents: number;
  complete: boolean;
  /** The main thread's counters from Run to Done (differences). */
  main: Metrics;
  /** Tasks that changed the output (its DOM) from Run to Done, and the nodes they inserted (rows, spans, text). */
  commits: number;
  added: number;
}

async function pageStream(): Promise<PageRun> {
  const page = await freshPage();
  await page.addInitScript(() => {
    const w = window as unknown as { __long: number[]; __input: number[]; __commits: number; __added: number };
    w.__long = [];
    w.__input = [];
    w.__commits = 0;
    w.__added = 0;
    // Counts the tasks that changed the output once it exists (one callback per task, however many
    // nodes changed). No named functions in here: the bench's TypeScript loader would wrap them in a
    // helper that does not exist in the page.
    const wait = setInterval(() => {
      const log = document.querySelector('[role="log"][aria-label="Output"]');
      if (!log) return;
      clearInterval(wait);
      new MutationObserver((records) => {
        w.__commits++;
        for (const r of records) w.__added += r.addedNodes.length;
      }).observe(log, { childList: true, subtree: true, characterData: true, attributes: true });
    }, 50);
    new PerformanceObserver((list) => list.getEntries().forEach((e) => w.__long.push(e.duration))).observe({ type: "longtask", buffered: true });
    new PerformanceObserver((list) => list.getEntries().forEach((e) => ["keydown", "keypress", "keyup", "input"].includes(e.name) && w.__input.push(e.duration))).observe({
      type: "event",
      durationThreshold: 16,
    } as PerformanceObserverInit);
  });
  await page.goto(server.url);
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Performance.enable", { timeDomain: "threadTicks" } as never);
  const metrics = async (): Promise<Metrics> => {
    const { metrics: all } = (await cdp.send("Performance.getMetrics")) as { metrics: { name: string; value: number }[] };
    return Object.fromEntries(METRICS.map((m) => [m, all.find((x) => x.name === m)?.value ?? NaN])) as Metrics;
  };
  await page.getByLabel("Operation").selectOption({ label: "Stream object" });
  await page.getByLabel("Workflow", { exact: true }).selectOption("long-list");
  await page.getByLabel("Input", { exact: true }).fill(`Make the list. ${MARKER}`);
  const editor = page.getByRole("region", { name: "Schema" }).locator(".monaco-editor").first();
  await editor.waitFor();
  await editor.click();
  await page.keyboard.press("ControlOrMeta+A");
  await page.keyboard.press("Delete");
  await page.keyboard.insertText(JSON.stringify(SCHEMA));
  await page.waitForLoadState("networkidle");
  await page.evaluate(() => {
    const w = window as unknown as { __long: number[]; __input: number[]; __commits: number; __added: number };
    w.__long = [];
    w.__input = [];
    w.__commits = 0;
    w.__added = 0;
  });
  const before = await metrics();
  const start = Date.now();
  await page.getByRole("button", { name: "Run", exact: true }).click();
  const result = page.getByRole("region", { name: "Result" });
  await result.getByTestId("result-object").waitFor({ timeout: 120_000 });
  // Type while it streams: each key's delay to the next paint is recorded by the Event Timing observer.
  const input = page.getByLabel("Input", { exact: true });
  await input.click();
  await input.press("End");
  for (let i = 0; i < 20 && (await page.getByRole("status").textContent()) !== "Complete"; i++) await page.keyboard.type("x", { delay: 100 });
  await page.getByRole("status").filter({ hasText: "Complete" }).waitFor({ state: "attached", timeout: 1_800_000 });
  const ms = Date.now() - start;
  const after = await metrics();
  const main = Object.fromEntries(METRICS.map((m) => [m, after[m] - before[m]])) as Metrics;
  // The server's own time for this very run (its metadata's duration, as the panel shows it).
  const shown = (await page.getByRole("region", { name: "Run metadata" }).getByTestId("meta-duration").textContent()) ?? "";
  const m = /(?:(\d+) min )?([\d.]+) (ms|s)/.exec(shown);
  const serverMs = m ? Number(m[1] ?? 0) * 60_000 + Number(m[2]) * (m[3] === "ms" ? 1 : 1_000) : NaN;
  const { long, input: inputs, commits, added } = await page.evaluate(() => {
    const w = window as unknown as { __long: number[]; __input: number[]; __commits: number; __added: number };
    return { long: w.__long, input: w.__input, commits: w.__commits, added: w.__added };
  });
  // The whole object is in the view: its last item can be found (scrolled to, where the view is virtualised).
  const complete = await result.getByText(`"Item number ${ITEMS - 1}"`).count().then((n) => n > 0).catch(() => false);
  await page.context().close();
  return {
    ms,
    serverMs,
    longTasks: long.length,
    longTotal: long.reduce((a, b) => a + b, 0),
    longMax: Math.max(0, ...long),
    over200: long.filter((d) => d > 200).length,
    inputMax: Math.max(0, ...inputs),
    inputMedian: inputs.length ? [...inputs].sort((a, b) => a - b)[Math.floor(inputs.length / 2)]! : 0,
    inputEvents: inputs.length,
    complete,
    main,
    commits,
    added,
  };
}

try {
  // One warm-up visit so that Next.js has loaded each page's server bundle (a first start's cost, not the browser's).
  for (const p of ["/", "/runs", "/docs"]) await fetch(`${server.url}${p}`).then((r) => r.text());
  const loads = [
    await coldLoad("playground", server.url, (page) => page.getByRole("region", { name: "Schema" }).locator(".monaco-editor").first().waitFor({ timeout: 120_000 })),
    await coldLoad("runs", `${server.url}/runs`, (page) => page.getByRole("heading", { level: 1 }).first().waitFor({ timeout: 120_000 })),
    await coldLoad("docs", `${server.url}/docs`, (page) => page.getByRole("heading", { level: 1 }).first().waitFor({ timeout: 120_000 })),
  ];
  console.log(`root: ${ROOT}`);
  console.log("| page | transferred | responses | compressed | ready |");
  console.log("|---|---|---|---|---|");
  for (const l of loads) console.log(`| ${l.page} | ${(l.bytes / 1024 / 1024).toFixed(2)} MB | ${l.responses} | ${l.compressed} | ${(l.readyMs / 1000).toFixed(2)} s |`);

  const s = await serverStream();
  console.log(`\nstream of ${ITEMS} items (${(big.length / 1024).toFixed(0)} KB of JSON): server ${(s.ms / 1000).toFixed(1)} s, ${s.events} events, ${(s.bytes / 1024 / 1024).toFixed(2)} MB, ${Math.round(s.events / (s.ms / 1000))} events/s, ${Math.round(Math.ceil(big.length / 8) / (s.ms / 1000))} upstream deltas/s`);
  const p = await pageStream();
  console.log("| page Done | this run on the server | Done / server | long tasks | total | max | over 200 ms | input latency median / max (events ≥ 16 ms) | last item drawn |");
  console.log("|---|---|---|---|---|---|---|---|---|");
  console.log(
    `| ${(p.ms / 1000).toFixed(1)} s | ${(p.serverMs / 1000).toFixed(1)} s | ${(p.ms / p.serverMs).toFixed(2)}× | ${p.longTasks} | ${(p.longTotal / 1000).toFixed(1)} s | ${p.longMax.toFixed(0)} ms | ${p.over200} | ${p.inputEvents ? `${p.inputMedian.toFixed(0)} / ${p.inputMax.toFixed(0)} ms` : "< 16 ms"} (${p.inputEvents}) | ${p.complete ? "yes" : "no"} |`,
  );
  const m = p.main;
  const per = (seconds: number) => `${((seconds * 1000) / Math.max(1, p.commits)).toFixed(1)} ms`;
  console.log("\nthe page's main thread from Run to Done (Chromium's counters, CPU time of that thread: it does not grow with the machine's load as wall time does):");
  console.log("| CPU time | tasks | script | style | layout | layouts | output commits | nodes inserted per commit | CPU per commit | style + layout per commit |");
  console.log("|---|---|---|---|---|---|---|---|---|---|");
  console.log(
    `| ${m.ThreadTime.toFixed(2)} s | ${m.TaskDuration.toFixed(2)} s | ${m.ScriptDuration.toFixed(2)} s | ${m.RecalcStyleDuration.toFixed(2)} s | ${m.LayoutDuration.toFixed(2)} s | ${m.LayoutCount} | ${p.commits} | ${(p.added / Math.max(1, p.commits)).toFixed(0)} | ${per(m.ThreadTime)} | ${per(m.RecalcStyleDuration + m.LayoutDuration)} |`,
  );
} finally {
  await browser.close();
  await server.stop();
  await upstream.close();
}
