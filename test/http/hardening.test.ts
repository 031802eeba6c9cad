import http from "node:http";
import net from "node:net";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CALLBACK, INVOICE_SCHEMA } from "../helpers/config";
import { DOCX_TYPE, docxBody, makeDocx } from "../helpers/documents";
import { createKey, get, post } from "../helpers/genserve";
import { waitUntil } from "../helpers/receiver";
import { useGenserve } from "../helpers/suite";

// The hostile caller of issue 11, over real HTTP, against the default network policy
// (allowPrivate: false) and a loopback "victim" listener. Limits are lowered so each attack
// reaches its limit quickly.
const ctx = useGenserve(`
limits:
  validationTimeoutMs: 1500
  attachmentUnpackedBytes: 4194304
  attachmentElements: 100000
  callbackPollMs: 100
server:
  headersTimeoutMs: 1000
  requestTimeoutMs: 2000
`);

let victim: http.Server;
let victimHits = 0;
let victimPort = 0;
let other: { key: string };

beforeAll(async () => {
  victim = http.createServer((req, res) => {
    victimHits++;
    res.writeHead(200).end("victim");
  });
  await new Promise<void>((resolve) => victim.listen(0, "127.0.0.1", resolve));
  victimPort = (victim.address() as AddressInfo).port;
  other = await createKey("bystander", { dataDir: ctx.server.dataDir });
});
afterAll(async () => new Promise((r) => victim?.close(r)));

const text = (body: Record<string, unknown>, key = ctx.key) =>
  post(ctx.server, "/api/v1/generate/text", { input: "Hello", type: "event", workflowSlug: "no-retry", callback: CALLBACK, ...body }, key);
const object = (body: Record<string, unknown>, key = ctx.key) =>
  post(ctx.server, "/api/v1/generate/object", { input: "Hello", type: "event", workflowSlug: "no-retry", callback: CALLBACK, schema: INVOICE_SCHEMA, ...body }, key);
const alive = async () => expect((await get(ctx.server, "/healthz", null)).status).toBe(200);

describe("callback headers", () => {
  it("refuses names and values HTTP does not allow, naming each header (they used to poison the outbox)", async () => {
    const res = await text({ callback: { url: "https://example.com/hook", headers: { "X-Customer": "中文", "X-Split": "a\r\nX-Injected: 1", "X-Nul": "a\u0000b", "X Bad": "v", "X-Fine": "ok; q=1" } } });
    expect(res.status).toBe(400);
    expect(res.json.errors.map((e: { path: string }) => e.path).sort()).toEqual([
      "/callback/headers/X Bad",
      "/callback/headers/X-Customer",
      "/callback/headers/X-Nul",
      "/callback/headers/X-Split",
    ]);
    await alive();
  });
});

describe("schema validation is bounded in time and isolated", () => {
  it("screens a property named like a keyword as the subschema it is", async () => {
    const res = await object({ schema: { type: "object", properties: { properties: { type: "string", pattern: "^(a|a)*(?!b)$" } } } });
    expect(res.status).toBe(400);
    expect(res.json.errors).toEqual([{ path: "/schema/properties/properties/pattern", message: expect.stringMatching(/backtrack in exponential time/) }]);
  });

  it("judges at once, on RE2, an answer that would backtrack 2^n on JavaScript's engine, and serves other keys meanwhile", async () => {
    // On JavaScript's engine (a|a)* takes 2^41 steps on this answer; a worker would be stopped.
    // The time limit itself (schema_timeout) is covered by the worker pool's tests.
    const before = (await get(ctx.server, "/readyz", null)).json.schemaWorkers.replaced as number;
    const hostile = { type: "object", properties: { properties: { type: "string", pattern: "^(a|a)*$" } }, required: ["properties"] };
    ctx.upstream.reply({ content: JSON.stringify({ properties: `${"a".repeat(40)}!` }) });
    const attack = object({ schema: hostile });
    await waitUntil(() => ctx.upstream.requests.length === 1, "the hostile run to reach the model");
    ctx.upstream.reply({ content: JSON.stringify({ number: "INV-1", total: 1, currency: "EUR" }) });
    expect((await object({}, other.key)).status).toBe(200);
    const attacked = await attack;
    expect(attacked.status).toBe(502);
    expect(attacked.json).toMatchObject({ code: "output_invalid", errors: [{ path: "/properties", message: expect.stringMatching(/must match pattern/) }] });
    const ready = await get(ctx.server, "/readyz", null);
    expect(ready.status).toBe(200);
    expect(ready.json.schemaWorkers).toMatchObject({ stuck: 0, replaced: before });
  });
});

describe("documents are read off the event loop, within limits", () => {
  it("refuses a DOCX that unpacks past limits.attachmentUnpackedBytes, and one with too many elements", async () => {
    const big = await makeDocx(docxBody(`<w:p><w:r><w:t>${"a".repeat(8 * 1024 * 1024)}</w:t></w:r></w:p>`));
    expect(big.length).toBeLessThan(100_000);
    const unpacked = await text({ attachments: [{ file: big.toString("base64"), mimeType: DOCX_TYPE }] });
    expect(unpacked.status).toBe(422);
    expect(unpacked.json).toMatchObject({ code: "attachment_unreadable", errors: [{ path: "/attachments/0/file", message: expect.stringMatching(/limits\.attachmentUnpackedBytes/) }] });

    const many = await makeDocx(docxBody("<w:p><w:r><w:t>a</w:t></w:r></w:p>".repeat(60_000)));
    const elements = await text({ attachments: [{ file: many.toString("base64"), mimeType: DOCX_TYPE }] });
    expect(elements.status).toBe(422);
    expect(elements.json.errors[0].message).toMatch(/limits\.attachmentElements/);
    await alive();
  });

  it("refuses the bomb of the report (tens of MB of XML in a few hundred KB) quickly, and still reads ordinary documents", async () => {
    const bomb = await makeDocx(docxBody("<w:p><w:r><w:t>a</w:t></w:r></w:p>".repeat(1_200_000)));
    expect(bomb.length).toBeLessThan(400_000);
    const refused = await text({ attachments: [{ file: bomb.toString("base64"), mimeType: DOCX_TYPE }] });
    expect(refused.status).toBe(422);
    const fine = await makeDocx(docxBody("<w:p><w:r><w:t>Total: 7 EUR</w:t></w:r></w:p>"));
    const read = await text({ attachments: [{ file: fine.toString("base64"), mimeType: DOCX_TYPE }] });
    expect(read.status).toBe(200);
  });

  it("refuses HTML with more elements than the limit", async () => {
    const html = Buffer.from(`<html><body>${"<b>x</b>".repeat(120_000)}</body></html>`).toString("base64");
    const res = await text({ attachments: [{ file: html, mimeType: "text/html" }] });
    expect(res.status).toBe(422);
    expect(res.json.errors[0].message).toMatch(/limits\.attachmentElements/);
  });
});

describe("request bodies", () => {
  it("refuses JSON nested deeper than limits.jsonDepth anywhere, and deep schemas, with 400 (never 500)", async () => {
    const deep = `${'{"a":'.repeat(10_000)}1${"}".repeat(10_000)}`;
    const res = await post(ctx.server, "/api/v1/generate/text", `{"input":"x","type":"event","workflowSlug":"no-retry","callback":{"url":"https://example.com/h","customProperties":${deep}}}`, ctx.key);
    expect(res.status).toBe(400);
    expect(res.json.errors[0]).toMatchObject({ path: expect.stringMatching(/^\/callback\/customProperties\/a\/a/), message: expect.stringMatching(/limits\.jsonDepth/) });

    for (const levels of [40, 2_000, 4_000]) {
      // Written out as text: JSON.stringify itself overflows the stack on such nesting.
      const schema = `${'{"type":"object","properties":{"properties":'.repeat(levels)}{"type":"string"}${"}}".repeat(levels)}`;
      const body = `{"input":"x","type":"event","workflowSlug":"no-retry","callback":{"url":"https://example.com/h"},"schema":${schema}}`;
      const deepSchema = await post(ctx.server, "/api/v1/generate/object", body, ctx.key);
      expect(deepSchema.status, `${levels} levels`).toBe(400);
      expect(deepSchema.json.errors[0].message).toMatch(/limits\.(schemaDepth|jsonDepth)/);
    }
    await alive();
  });

  it("decodes inline base64 attachments up to the documented limit (a regex over the whole string used to overflow at ~4 MiB)", async () => {
    const file = Buffer.from("line of text\n".repeat(400_000)).toString("base64"); // 5.2 MB decoded, 6.9 MB of base64
    const res = await text({ attachments: [{ file, mimeType: "text/plain" }] });
    expect(res.status).toBe(200);
    const run = await get(ctx.server, `/api/v1/runs/${res.json.metadata.runId}`, ctx.key);
    expect(run.json.attachments[0]).toMatchObject({ bytes: 5_200_000, source: "inline" });
    const broken = await text({ attachments: [{ file: `${file.slice(0, -3)}!`, mimeType: "text/plain" }] });
    expect(broken.status).toBe(400);
  });

  it("answers malformed attachment URLs with 400 naming the attachment", async () => {
    for (const file of ["http://[fe80::1%25lo]:1/x", "http://exa\tmple.com/x", "http://a b/"]) {
      const res = await text({ attachments: [{ file }] });
      expect(res.status, file).toBe(400);
      expect(res.json.errors[0].path).toBe("/attachments/0/file");
    }
  });

  it("refuses thread ids '.' and '..'", async () => {
    for (const id of [".", ".."]) {
      const created = await post(ctx.server, "/api/v1/threads", { workflowSlug: "no-retry", id }, ctx.key);
      expect(created.status).toBe(400);
      expect(created.json.errors[0].path).toBe("/id");
      const streamed = await post(ctx.server, "/api/v1/stream/object", { input: "x", threadId: id, workflowSlug: "no-retry", schema: INVOICE_SCHEMA }, ctx.key);
      expect(streamed.status).toBe(400);
    }
  });

  it("answers a method a route does not have with 405 problem+json and Allow", async () => {
    const res = await fetch(`${ctx.server.url}/api/v1/generate/object`, { method: "PUT", headers: { "api-key": ctx.key } });
    expect(res.status).toBe(405);
    expect(res.headers.get("content-type")).toMatch(/application\/problem\+json/);
    expect(res.headers.get("allow")).toBe("POST, OPTIONS");
    expect(await res.json()).toMatchObject({ code: "method_not_allowed", status: 405 });
    const runs = await fetch(`${ctx.server.url}/api/v1/runs`, { method: "DELETE", headers: { "api-key": ctx.key } });
    expect(runs.status).toBe(405);
    expect(runs.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
  });

  it("times out a request body that trickles in (server.requestTimeoutMs)", async () => {
    const started = Date.now();
    const reply = await new Promise<string>((resolve) => {
      const socket = net.connect(Number(new URL(ctx.server.url).port), "127.0.0.1");
      let got = "";
      socket.write(`POST /api/v1/generate/text HTTP/1.1\r\nHost: x\r\nApi-Key: ${ctx.key}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n`);
      const drip = setInterval(() => socket.write(" "), 300);
      socket.on("data", (d) => (got += d.toString()));
      socket.on("close", () => (clearInterval(drip), resolve(got)));
      socket.on("error", () => undefined);
    });
    expect(reply).toMatch(/^HTTP\/1\.1 408/);
    expect(Date.now() - started).toBeLessThan(8_000);
  });

  it("keeps an idle connection open past the header and request time-outs (server.keepAliveTimeoutMs), and says for how long", async () => {
    const socket = net.connect(Number(new URL(ctx.server.url).port), "127.0.0.1");
    socket.on("error", () => undefined);
    let got = "";
    let closed = false;
    socket.on("data", (d) => (got += d.toString()));
    socket.on("close", () => (closed = true));
    const answers = (n: number) => waitUntil(() => (got.match(/HTTP\/1\.1 200/g) ?? []).length >= n || closed, "an answer");
    socket.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    await answers(1);
    expect(got).toMatch(/^Keep-Alive: timeout=65$/im);
    // Idle for longer than both time-outs (1 s and 2 s here): a client reusing it is not cut off.
    const idleSince = Date.now();
    await waitUntil(() => Date.now() - idleSince > 3_000 || closed, "the idle time");
    expect(closed).toBe(false);
    socket.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    await answers(2);
    expect(got.match(/HTTP\/1\.1 200/g)).toHaveLength(2);
    socket.destroy();
  });
});

describe("request targets", () => {
  /** Sends one raw request and returns the response head (status line and headers). */
  const raw = (requestLine: string, headers = "") =>
    new Promise<string>((resolve) => {
      const socket = net.connect(Number(new URL(ctx.server.url).port), "127.0.0.1");
      let got = "";
      socket.write(`${requestLine}\r\nHost: 127.0.0.1\r\n${headers}Connection: close\r\n\r\n`);
      socket.on("data", (d) => (got += d.toString()));
      socket.on("close", () => resolve(got.split("\r\n\r\n")[0]!));
      socket.on("error", () => undefined);
    });

  it("never redirects to a host named in an absolute-form request line: only its path is used", async () => {
    for (const target of ["http://evil.example/x", "http://evil.example/", "https://evil.example/runs?x=1", "http://evil.example"]) {
      const head = await raw(`GET ${target} HTTP/1.1`);
      expect(head, target).toMatch(/^HTTP\/1\.1 \d{3}/);
      expect(head, target).not.toMatch(/evil\.example/);
    }
    // The API answers it as the path it names.
    expect(await raw("GET http://evil.example/api/v1/me HTTP/1.1")).toMatch(/^HTTP\/1\.1 401/);
    expect(await raw("GET http://evil.example/api/v1/me HTTP/1.1", `Api-Key: ${ctx.key}\r\n`)).toMatch(/^HTTP\/1\.1 200/);
    // A target that is neither a path nor an http(s) URL is refused.
    expect(await raw("GET evil.example:80 HTTP/1.1")).toMatch(/^HTTP\/1\.1 400/);
    await alive();
  });
});

describe("the built-in inbox is no way into loopback", () => {
  const rawPost = (path: string, host: string) =>
    new Promise<{ status: number; body: any }>((resolve, reject) => {
      const req = http.request(`${ctx.server.url}${path}`, { method: "POST", headers: { host, "api-key": ctx.key, "content-length": "0" } }, (res) => {
        let body = "";
        res.on("data", (d) => (body += d));
        res.on("end", () => resolve({ status: res.statusCode!, body: JSON.parse(body) }));
      });
      req.on("error", reject);
      req.end();
    });

  it("builds the inbox URL from the public address, not the Host header, and refuses loopback elsewhere", async () => {
    const created = await rawPost("/api/v1/inbox", `127.0.0.1:${victimPort}`);
    expect(created.status).toBe(201);
    expect(created.body.url).toBe(`${ctx.server.url}/api/v1/inbox/${created.body.id}`);

    const hostile = await text({ callback: { url: `http://127.0.0.1:${victimPort}/api/v1/inbox/${created.body.id}` } });
    expect(hostile.status).toBe(400);
    expect(hostile.json.errors[0].path).toBe("/callback/url");

    const own = await text({ callback: { url: created.body.url } });
    expect(own.status).toBe(200);
    await waitUntil(async () => (await get(ctx.server, `/api/v1/inbox/${created.body.id}`, ctx.key)).json.events.length === 1, "the event in the inbox");
    expect(victimHits).toBe(0);
  });
});

describe("provider failures", () => {
  it("never passes a provider's error body on: the caller sees the status and a stable code, the log is scrubbed", async () => {
    ctx.upstream.reply({ status: 401, errorMessage: "Incorrect API key provided: Bearer sk-test. at Object.handler (/srv/app/auth.js:12:5)" });
    const res = await text({});
    expect(res.status).toBe(502);
    expect(res.json).toMatchObject({ code: "model_error", detail: expect.stringContaining("401") });
    expect(JSON.stringify(res.json)).not.toMatch(/sk-test|Incorrect|auth\.js/);
    const run = await get(ctx.server, `/api/v1/runs/${res.json.runId}`, ctx.key);
    expect(JSON.stringify(run.json)).not.toMatch(/sk-test|Incorrect|auth\.js/);
    await waitUntil(() => /Incorrect API key provided/.test(ctx.server.output()), "the provider's words in the server log");
    expect(ctx.server.output()).not.toContain("sk-test");
  });

  it("reports an upstream that always fails as 502 with its status, and retries within the workflow's budget only", async () => {
    ctx.upstream.reply({ status: 500 }, { status: 500 }, { status: 500 });
    const res = await text({});
    expect(res.status).toBe(502);
    expect(res.json).toMatchObject({ code: "model_error", detail: expect.stringContaining("500") });
    expect(ctx.upstream.requests).toHaveLength(1); // retries: 0, and the SDK retries nothing on its own

    ctx.upstream.reset();
    ctx.upstream.reply({ status: 503 }, { status: 500 }, { content: "fine" });
    const retried = await text({ workflowSlug: "extract-invoice" }); // retries: 2
    expect(retried.status).toBe(200);
    expect(ctx.upstream.requests).toHaveLength(3);
    const run = await get(ctx.server, `/api/v1/runs/${retried.json.metadata.runId}`, ctx.key);
    expect(run.json.attempts).toBe(3);
  });
});

describe("views never show secrets again", () => {
  it("masks callback header values (names kept) in the run, the run list and the delivery view", async () => {
    const res = await text({ callback: { url: "https://example.com/hook", headers: { Authorization: "Bearer receiver-s3cret", "X-Tenant": "acme" } } });
    expect(res.status).toBe(200);
    const run = await get(ctx.server, `/api/v1/runs/${res.json.metadata.runId}`, ctx.key);
    expect(run.json.callback.headers).toEqual({ Authorization: "[hidden]", "X-Tenant": "[hidden]" });
    const list = await get(ctx.server, "/api/v1/runs?limit=5", ctx.key);
    expect(list.text).not.toContain("receiver-s3cret");
    expect(run.text).not.toContain("receiver-s3cret");
  });
});

describe("browser security headers", () => {
  it("sends a strict CSP with a per-request nonce on pages, and the other headers everywhere", async () => {
    const page = await fetch(`${ctx.server.url}/`);
    const csp = page.headers.get("content-security-policy") ?? "";
    const nonce = /'nonce-([^']+)'/.exec(csp)?.[1];
    expect(nonce).toBeTruthy();
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("object-src 'none'");
    expect(csp).not.toMatch(/script-src[^;]*'unsafe-inline'/);
    const html = await page.text();
    const scripts = [...html.matchAll(/<script\b[^>]*>/g)].map((m) => m[0]);
    expect(scripts.length).toBeGreaterThan(0);
    for (const tag of scripts) expect(tag).toContain(`nonce="${nonce}"`);
    const again = await fetch(`${ctx.server.url}/`);
    expect(again.headers.get("content-security-policy")).not.toBe(csp);
    await again.text();
    for (const res of [page, await fetch(`${ctx.server.url}/api/v1/workflows`, { headers: { "api-key": ctx.key } })]) {
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      expect(res.headers.get("x-frame-options")).toBe("DENY");
      expect(res.headers.get("referrer-policy")).toBe("no-referrer");
      expect(res.headers.get("permissions-policy")).toContain("camera=()");
    }
  });
});

describe("stream/object", () => {
  it("sends its headers, X-Run-ID included, before the model's first token", async () => {
    ctx.upstream.reply({ delayMs: 6_000 });
    const started = Date.now();
    const controller = new AbortController();
    const res = await fetch(`${ctx.server.url}/api/v1/stream/object`, {
      method: "POST",
      headers: { "content-type": "application/json", "api-key": ctx.key },
      body: JSON.stringify({ input: "x", workflowSlug: "no-retry", schema: INVOICE_SCHEMA }),
      signal: controller.signal,
    });
    expect(Date.now() - started).toBeLessThan(4_500); // well before the model's first token (6 s)
    expect(res.headers.get("x-run-id")).toMatch(/^run_/);
    controller.abort();
  });
});
