import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { INVOICE_SCHEMA, testConfig } from "../helpers/config";
import { startFakeUpstream, type FakeUpstream } from "../helpers/fake-upstream";
import { createKey, get, post, startGenserve, tempDir, writeConfig, type GenserveServer } from "../helpers/genserve";
import { startReceiver, waitUntil } from "../helpers/receiver";
import { readSse, streamRequest } from "../helpers/streams";

// Metrics, traces, logs and usage reports over real HTTP: a Prometheus scrape of /metrics, an
// OTLP/HTTP collector on loopback receiving the run's spans, the server's JSON log, and
// GET /api/v1/usage.
const METRICS_TOKEN = "scrape-token-0123456789";

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: { key: string; value: Record<string, unknown> }[];
  status?: { code?: number };
}

const attr = (span: OtlpSpan, key: string): unknown => {
  const value = span.attributes.find((a) => a.key === key)?.value;
  if (!value) return undefined;
  const [first] = Object.values(value);
  return typeof first === "string" && "intValue" in value ? Number(first) : first;
};

describe("observability", () => {
  let upstream: FakeUpstream;
  let collector: Awaited<ReturnType<typeof startReceiver>>;
  let hooks: Awaited<ReturnType<typeof startReceiver>>;
  let server: GenserveServer;
  let admin: string;
  let user: { id: string; key: string };

  beforeAll(async () => {
    upstream = await startFakeUpstream();
    collector = await startReceiver();
    hooks = await startReceiver();
    const dir = tempDir();
    const extra = `
network:
  allowPrivate: true
observability:
  metricsToken: ${METRICS_TOKEN}
  traces:
    endpoint: http://127.0.0.1:${collector.port}/v1/traces
    exportDelayMs: 50
`;
    server = await startGenserve({ configFile: writeConfig(dir, testConfig(upstream.url, extra)), dataDir: `${dir}/data` });
    admin = server.adminKey!;
    user = await createKey("user", { dataDir: server.dataDir });
  });
  afterAll(async () => {
    await server?.stop();
    await upstream?.close();
    await collector?.close();
    await hooks?.close();
  });
  beforeEach(() => {
    upstream.reset();
    collector.reset();
    hooks.reset();
  });

  const spans = (): OtlpSpan[] =>
    collector.received.flatMap((r) => {
      const body = JSON.parse(r.body) as { resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[] };
      return body.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans));
    });

  it("traces a run under the caller's traceparent: planning, each model attempt, validation and the callback delivery, with GenAI attributes", async () => {
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const parentId = "00f067aa0ba902b7";
    upstream.reply({ content: "not json", usage: { prompt_tokens: 20, completion_tokens: 5 } }, { content: JSON.stringify({ number: "INV-1", total: 1, currency: "EUR" }), usage: { prompt_tokens: 30, completion_tokens: 9 } });
    const res = await post(server, "/api/v1/generate/object", { input: "Invoice 1", type: "event", workflowSlug: "extract-invoice", schema: INVOICE_SCHEMA, callback: { url: hooks.url } }, admin, {
      traceparent: `00-${traceId}-${parentId}-01`,
    });
    expect(res.status).toBe(200);
    const runId = res.json.metadata.runId as string;
    expect((await get(server, `/api/v1/runs/${runId}`, admin)).json.traceId).toBe(traceId);
    await waitUntil(() => hooks.received.length === 1, "the callback");
    await waitUntil(() => spans().some((s) => s.name === "callback delivery"), "the delivery span");

    const all = spans().filter((s) => s.traceId === traceId);
    const run = all.find((s) => s.name === "generate.object")!;
    expect(run.parentSpanId).toBe(parentId);
    expect(run.kind).toBe(2); // SERVER
    expect(attr(run, "gen_ai.operation.name")).toBe("chat");
    expect(attr(run, "gen_ai.request.model")).toBe("fake-7b");
    expect(attr(run, "gen_ai.provider.name")).toBe("openai-compatible");
    expect(attr(run, "gen_ai.usage.input_tokens")).toBe(50);
    expect(attr(run, "gen_ai.usage.output_tokens")).toBe(14);
    expect(attr(run, "genserve.run.id")).toBe(runId);
    expect(attr(run, "genserve.workflow")).toBe("extract-invoice");
    const children = all.filter((s) => s.parentSpanId === run.spanId);
    expect(children.map((s) => s.name).sort()).toEqual(["callback delivery", "chat fake-7b", "chat fake-7b", "plan", "validate"]);
    const calls = children.filter((s) => s.name === "chat fake-7b").sort((a, b) => Number(attr(a, "genserve.attempt")) - Number(attr(b, "genserve.attempt")));
    expect(calls.map((c) => [attr(c, "genserve.attempt"), attr(c, "gen_ai.usage.input_tokens"), c.kind])).toEqual([
      [1, 20, 3],
      [2, 30, 3],
    ]);
    const delivery = children.find((s) => s.name === "callback delivery")!;
    expect(attr(delivery, "http.response.status_code")).toBe(200);

    // The log lines of the run carry its id and trace id.
    const logged = server
      .output()
      .split("\n")
      .filter((l) => l.includes(runId))
      .map((l) => JSON.parse(l) as { traceId?: string });
    expect(logged.length).toBeGreaterThan(0);
    expect(logged.filter((l) => l.traceId !== traceId)).toEqual([]);
  });

  it("starts a trace for a run without traceparent, ends failed runs' spans with their code, and follows a queued run into its execution", async () => {
    upstream.reply({ status: 400 });
    const failed = await post(server, "/api/v1/generate/text", { input: "x", type: "event", workflowSlug: "no-retry", callback: { url: hooks.url } }, admin);
    expect(failed.status).toBe(502);
    const record = (await get(server, `/api/v1/runs/${failed.json.runId}`, admin)).json;
    expect(record.traceId).toMatch(/^[0-9a-f]{32}$/);
    const queued = await post(server, "/api/v1/generate/text", { input: "later", type: "event", workflowSlug: "no-retry", callback: { url: hooks.url } }, admin, { Prefer: "respond-async" });
    expect(queued.status).toBe(202);
    const queuedTrace = (await get(server, `/api/v1/runs/${queued.json.runId}`, admin)).json.traceId as string;
    await waitUntil(() => spans().some((s) => s.traceId === queuedTrace && s.name === "generate.text (queued)"), "the queued run's execution span");
    const failedSpan = spans().find((s) => s.traceId === record.traceId && s.name === "generate.text")!;
    expect(failedSpan.status?.code).toBe(2); // ERROR
    expect(attr(failedSpan, "error.type")).toBe("model_error");
    const submitted = spans().find((s) => s.traceId === queuedTrace && s.name === "generate.text")!;
    const executed = spans().find((s) => s.traceId === queuedTrace && s.name === "generate.text (queued)")!;
    expect(executed.parentSpanId).toBe(submitted.spanId);
  });

  it("serves Prometheus metrics to admin keys and the metrics token only: requests, runs, tokens, cost, errors, retries, deliveries, queues, event-loop lag", async () => {
    upstream.reply({ status: 503 }, { content: JSON.stringify({ number: "INV-2", total: 2, currency: "EUR" }), usage: { prompt_tokens: 100, completion_tokens: 50 } });
    expect((await post(server, "/api/v1/generate/object", { input: "Invoice 2", type: "event", workflowSlug: "extract-invoice", schema: INVOICE_SCHEMA, callback: { url: hooks.url } }, user.key)).status).toBe(200);
    const stream = await streamRequest(server.url, admin, { input: "Invoice 3", workflowSlug: "extract-invoice", schema: INVOICE_SCHEMA });
    expect((await readSse(stream)).events.at(-1)!.event).toBe("done");
    await waitUntil(() => hooks.received.length === 1, "the callback");

    expect((await fetch(`${server.url}/metrics`)).status).toBe(401);
    expect((await fetch(`${server.url}/metrics`, { headers: { authorization: "Bearer wrong-token-0123456789" } })).status).toBe(401);
    expect((await fetch(`${server.url}/metrics`, { headers: { "api-key": user.key } })).status).toBe(403);
    const byAdmin = await fetch(`${server.url}/metrics`, { headers: { "api-key": admin } });
    expect(byAdmin.status).toBe(200);
    const scrape = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(scrape.status).toBe(200);
    expect(scrape.headers.get("content-type")).toContain("text/plain");
    const text = await scrape.text();
    const sample = (name: string, labels: Record<string, string>) => {
      const line = text.split("\n").find((l) => l.startsWith(`${name}{`) && Object.entries(labels).every(([k, v]) => l.includes(`${k}="${v}"`)));
      return line === undefined ? undefined : Number(line.split(" ").at(-1));
    };
    expect(sample("genserve_http_request_duration_seconds_count", { route: "/api/v1/generate/object", method: "POST", status: "200" })).toBeGreaterThanOrEqual(1);
    expect(sample("genserve_http_request_duration_seconds_count", { route: "/api/v1/runs/[id]", method: "GET" })).toBeGreaterThanOrEqual(1);
    expect(sample("genserve_run_duration_seconds_count", { operation: "generate.object", workflow: "extract-invoice", model: "fast", status: "succeeded" })).toBeGreaterThanOrEqual(2);
    expect(sample("genserve_run_time_to_first_item_seconds_count", { workflow: "extract-invoice", model: "fast" })).toBe(1);
    expect(sample("genserve_tokens_total", { workflow: "extract-invoice", model: "fast", key: user.id, direction: "input" })).toBe(100);
    expect(sample("genserve_cost_usd_total", { workflow: "extract-invoice", model: "fast", key: user.id })).toBeCloseTo(0.000045, 9);
    expect(sample("genserve_run_errors_total", { workflow: "no-retry", model: "free", code: "model_error" })).toBeGreaterThanOrEqual(1);
    expect(sample("genserve_run_retries_total", { workflow: "extract-invoice", model: "fast" })).toBeGreaterThanOrEqual(2);
    expect(sample("genserve_delivery_attempts_total", { outcome: "delivered" })).toBeGreaterThanOrEqual(1);
    expect(sample("genserve_admissions_total", { outcome: "admitted" })).toBeGreaterThanOrEqual(3);
    expect(text).toMatch(/^genserve_delivery_queue_depth \d+$/m);
    expect(text).toMatch(/^genserve_async_queue_depth \d+$/m);
    expect(text).toMatch(/^genserve_process_nodejs_eventloop_lag_seconds [\d.e-]+$/m);
    // No run ids or inputs in labels.
    expect(text).not.toMatch(/run_[0-9A-Z]{26}/);
  });

  it("reports usage per workflow, model or key over time; a key sees only its own", async () => {
    upstream.reply({ usage: { prompt_tokens: 1000, completion_tokens: 1000 } });
    expect((await post(server, "/api/v1/generate/text", { input: "x", type: "event", workflowSlug: "extract-invoice", callback: { url: hooks.url } }, user.key)).status).toBe(200);
    const all = await get(server, "/api/v1/usage?groupBy=key", admin);
    expect(all.status).toBe(200);
    expect(all.json.bucket).toBe("day");
    const mine = all.json.groups.find((g: { group: string }) => g.group === user.id);
    expect(mine.runs).toBe(2);
    expect(mine.costUsd).toBe("0.000795"); // 0.000045 + 0.00075
    expect(mine.durationMsP50).toBeGreaterThanOrEqual(0);
    expect(all.json.groups.length).toBeGreaterThanOrEqual(2);
    expect(all.json.series.at(-1).runs).toBeGreaterThanOrEqual(3);

    const own = await get(server, `/api/v1/usage?groupBy=workflow&from=${new Date(Date.now() - 3_600_000).toISOString()}`, user.key);
    expect(own.json.bucket).toBe("hour");
    expect(own.json.groups).toEqual([
      expect.objectContaining({ group: "extract-invoice", runs: 2, errors: 0, inputTokens: 1100, outputTokens: 1050, costUsd: "0.000795" }),
    ]);
    const bad = await get(server, "/api/v1/usage?from=yesterday&groupBy=colour", user.key);
    expect(bad.status).toBe(400);
    expect(bad.json.errors.map((e: { path: string }) => e.path).sort()).toEqual(["?from", "?groupBy"]);
    expect((await get(server, `/api/v1/usage?keyId=${server.adminKey ? "key_other" : ""}`, user.key)).status).toBe(400);
  });
});
