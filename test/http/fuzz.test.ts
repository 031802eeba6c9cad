import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { CALLBACK, INVOICE_SCHEMA } from "../helpers/config";
import { DOCX_TYPE, docxBody, makeDocx, makePdf } from "../helpers/documents";
import { createKey, get, post } from "../helpers/genserve";
import { useGenserve } from "../helpers/suite";

// Property-based request fuzzing (fast-check) of the three operations and the admin routes, as a
// hostile caller would send them: malformed shapes, huge and deep values, odd unicode, hostile
// schemas and attachments, raw bodies that are not JSON. Whatever arrives: never a 5xx other than
// an upstream fault, the server stays up, another key is served, and nothing stored is lost.
//
// Bounded to about a minute here; longer with `npm run fuzz:http -- --minutes N`
// (which sets GENSERVE_FUZZ_MS). A failure prints the request that caused it, shrunk.
const BUDGET_MS = Number(process.env.GENSERVE_FUZZ_MS ?? 45_000);
const SEED = process.env.GENSERVE_FUZZ_SEED === undefined ? undefined : Number(process.env.GENSERVE_FUZZ_SEED);

const ctx = useGenserve(`
limits:
  validationTimeoutMs: 1000
  attachmentFetchTimeoutMs: 1000
  attachmentExtractTimeoutMs: 3000
  callbackRetryScheduleMs: [3600000]
`);

/** 5xx answers that report a fault upstream of genserve (the model, a fetched URL), never its own. */
const UPSTREAM_FAULTS = new Set(["model_error", "output_invalid", "model_timeout", "model_unavailable", "attachment_fetch_failed"]);

const odd = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.string({ unit: "grapheme", maxLength: 20 }),
  fc.constantFrom("", " ", "\u0000", "\r\n", "中文", "\u202e", "\ud800", "🙂".repeat(50), "../../etc/passwd", "%00", "${HOME}", "{{x}}", "a".repeat(70_000)),
);
const name = fc.oneof(fc.constantFrom("properties", "pattern", "$ref", "items", "__proto__", "constructor", "", "a/b", "~0"), fc.string({ maxLength: 8 }));
const regex = fc.oneof(fc.constantFrom("^(a+)+$", "(a|a)*$", "(x*)*y", "[", "\\", "(?<=a)b", "a{1,99999}", "^[a-z]{2,5}$", "\\p{L}+", "(", "\\1(a)"), fc.string({ maxLength: 12 }));
const ref = fc.constantFrom("#", "#/$defs/x", "#/definitions/missing", "http://evil.example/s.json", "#/properties/properties", "#/default", "#/%ZZ", "other.json#/a");

const { schema } = fc.letrec<{ schema: unknown }>((tie) => ({
  schema: fc.oneof(
    { depthSize: "small", maxDepth: 5 },
    fc.record({ type: fc.constantFrom("object", "array", "string", "number", "integer", "boolean", "null", "strin", 5) }, { requiredKeys: [] }),
    fc.record(
      { type: fc.constant("object"), properties: fc.dictionary(name, tie("schema"), { maxKeys: 4 }), required: fc.array(name, { maxLength: 3 }), additionalProperties: fc.oneof(fc.boolean(), tie("schema")) },
      { requiredKeys: ["type"] },
    ),
    fc.record({ type: fc.constant("array"), items: tie("schema"), minItems: fc.integer({ min: -1, max: 5 }), maxItems: fc.integer({ min: 0, max: 100_000 }) }, { requiredKeys: ["type"] }),
    fc.record(
      { type: fc.constant("string"), pattern: regex, format: fc.constantFrom("date", "email", "uri", "weird"), maxLength: fc.integer(), enum: fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }) },
      { requiredKeys: [] },
    ),
    fc.record({ anyOf: fc.array(tie("schema"), { minLength: 1, maxLength: 3 }), $defs: fc.dictionary(name, tie("schema"), { maxKeys: 2 }) }, { requiredKeys: ["anyOf"] }),
    fc.record({ $ref: ref, default: fc.jsonValue({ maxDepth: 2 }), patternProperties: fc.dictionary(regex, tie("schema"), { maxKeys: 2 }) }, { requiredKeys: ["$ref"] }),
    fc.jsonValue({ maxDepth: 3 }),
  ),
}));
const topSchema = fc.oneof(
  fc.record({ type: fc.constant("object"), properties: fc.dictionary(name, schema, { maxKeys: 5 }), required: fc.array(name, { maxLength: 2 }) }, { requiredKeys: ["type"] }),
  schema,
  fc.constant(INVOICE_SCHEMA),
  // Deep nesting through properties named "properties" (JSON.stringify in this process bounds it).
  fc.integer({ min: 10, max: 1_500 }).map((levels) => {
    let s: Record<string, unknown> = { type: "string" };
    for (let i = 0; i < levels; i++) s = { type: "object", properties: { properties: s } };
    return s;
  }),
);

const url = fc.oneof(
  fc.constantFrom(
    "http://127.0.0.1:1/x",
    "http://[::1]/",
    "http://169.254.169.254/latest/meta-data",
    "http://0x7f.1/",
    "http://2130706433/",
    "ftp://example.com/x",
    "http://[fe80::1%25lo]:1/x",
    "http://exa\tmple.com/",
    "javascript:alert(1)",
    "http://user:pass@10.0.0.1/",
    "https://genserve-fuzz.invalid/hook",
  ),
  odd,
);
const b64 = (text: string | Buffer) => Buffer.from(text).toString("base64");
const attachment = fc.record(
  {
    file: fc.oneof(
      fc.base64String({ maxLength: 200 }),
      url,
      odd,
      fc.constantFrom("data:text/plain;base64,aGk=", "data:;base64,", "data:text/html,<b>x</b>", `data:text/html;base64,${b64("<b>".repeat(1_000))}`, b64(makePdf("fuzz", false, 2)), b64(makePdf("x", true))),
      fc.constant(Buffer.from([0xff, 0xfe, 0x41]).toString("base64")),
    ),
    mimeType: fc.oneof(fc.constantFrom("text/plain", "text/html", "application/pdf", DOCX_TYPE, "image/png", "application/x-evil", "text/plain; charset=utf-8", "a/b/c"), odd),
  },
  { requiredKeys: [] },
);
const callback = fc.oneof(
  fc.record({ url, headers: fc.dictionary(fc.oneof(name, odd), odd, { maxKeys: 3 }), customProperties: fc.jsonValue({ maxDepth: 4 }) }, { requiredKeys: ["url"] }),
  fc.jsonValue({ maxDepth: 2 }),
);
/** Mostly a plausible value, sometimes a hostile one: requests must get past validation to reach deeper code. */
const mostly = <T, U>(plausible: fc.Arbitrary<T>, hostile: fc.Arbitrary<U>) => fc.oneof({ weight: 5, arbitrary: plausible }, { weight: 1, arbitrary: hostile });
const plainSchema = fc.record(
  { type: fc.constant("object"), properties: fc.dictionary(fc.constantFrom("number", "total", "note", "lines"), fc.constantFrom({ type: "string" }, { type: "number" }, { type: "array", items: { type: "string" } }, { enum: ["EUR", "USD"] }), { maxKeys: 3 }) },
  { requiredKeys: ["type"] },
);
const runBody = fc.record(
  {
    input: mostly(fc.constantFrom("Invoice INV-7: one chair, 120.50 EUR", "hello"), fc.oneof(odd, fc.integer())),
    type: mostly(fc.constant("event"), fc.jsonValue({ maxDepth: 1 })),
    workflowSlug: mostly(fc.constantFrom("no-retry", "extract-invoice", "slow", "look", "support"), fc.oneof(fc.constantFrom("nope", "../etc", ""), odd)),
    callback: mostly(fc.constant(CALLBACK), callback),
    schema: mostly(fc.oneof(fc.constant(INVOICE_SCHEMA), plainSchema), topSchema),
    attachments: mostly(
      fc.constantFrom([], [{ file: b64("Paid on 2026-11-02."), mimeType: "text/plain" }], [{ file: b64(makePdf("Total 9 EUR")), mimeType: "application/pdf" }], [{ file: `data:text/html;base64,${b64("<p>Net <b>30</b></p>")}` }]),
      fc.oneof(fc.array(attachment, { maxLength: 2 }), fc.jsonValue({ maxDepth: 2 })),
    ),
    contextSlugs: mostly(fc.subarray(["tone", "invoice-rules"]), fc.array(fc.oneof(fc.constant("missing"), odd), { maxLength: 3 })),
    threadId: fc.oneof(fc.constantFrom(".", "..", "t1", "t2", "a/b", "x".repeat(200)), odd),
    surprise: fc.jsonValue({ maxDepth: 2 }),
  },
  { requiredKeys: ["input", "type", "workflowSlug", "callback", "schema"] },
).map((body) => {
  // Streams take no type or callback, and a thread only sometimes; unknown fields only sometimes.
  const { surprise, threadId, ...rest } = body as Record<string, unknown>;
  return { ...rest, ...(Math.abs(JSON.stringify(rest).length % 4) === 0 && { threadId }), ...(JSON.stringify(rest).length % 7 === 0 && { surprise }) };
});
const adminBody = fc.record(
  {
    model: fc.oneof(fc.constantFrom("fast", "free", "missing"), odd),
    instructions: odd,
    title: odd,
    content: fc.oneof(odd, fc.constant("x".repeat(100_000))),
    retries: fc.oneof(fc.integer(), odd),
    timeoutMs: fc.integer(),
    contexts: fc.array(fc.oneof(fc.constantFrom("tone", "missing"), odd), { maxLength: 3 }),
    temperature: fc.double(),
  },
  { requiredKeys: [] },
);

/** A JSON text nested `levels` deep somewhere in an otherwise plausible body. */
const deepJson = fc.integer({ min: 100, max: 20_000 }).map((levels) => `{"input":"x","type":"event","workflowSlug":"no-retry","callback":{"url":"https://e.invalid/h","customProperties":${"[".repeat(levels)}${"]".repeat(levels)}}}`);

/** A slug as a path segment (a string with a lone surrogate cannot be percent-encoded: sent as "x"). */
const pathSegment = (slug: string) => {
  try {
    return encodeURIComponent(slug) || "x";
  } catch {
    return "x";
  }
};

type Shot = { method: string; path: string; body: string; contentType: string; admin: boolean };
const operations = fc.constantFrom("/api/v1/generate/object", "/api/v1/generate/text", "/api/v1/stream/object", "/api/v1/threads");
const shot: fc.Arbitrary<Shot> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({ path: operations, value: runBody }).map(({ path, value }) => {
      const body = path === "/api/v1/stream/object" ? { ...value, type: undefined, callback: undefined } : value;
      return { method: "POST", path, body: JSON.stringify(body), contentType: "application/json", admin: false };
    }),
  },
  {
    weight: 2,
    arbitrary: fc
      .record({ kind: fc.constantFrom("workflows", "contexts"), slug: fc.oneof(fc.constantFrom("fz-1", "fz-2", "no-retry", "tone"), odd), value: adminBody })
      .map(({ kind, slug, value }) => ({ method: "PUT", path: `/api/v1/${kind}/${pathSegment(slug)}`, body: JSON.stringify(value), contentType: "application/json", admin: true })),
  },
  {
    weight: 2,
    arbitrary: fc
      .record({ path: operations, raw: fc.oneof(odd, deepJson, fc.constantFrom("{", "[]", "null", '{"input":', "\u0000", '{"a":1}{"b":2}')), contentType: fc.constantFrom("application/json", "text/plain", "application/x-www-form-urlencoded", "application/json; charset=latin1", "") })
      .map(({ path, raw, contentType }) => ({ method: "POST", path, body: raw, contentType, admin: false })),
  },
);

async function send(s: Shot, key: string): Promise<{ status: number; body: string; contentType: string }> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), 20_000);
  try {
    const res = await fetch(`${ctx.server.url}${s.path}`, {
      method: s.method,
      headers: { "api-key": key, ...(s.contentType ? { "content-type": s.contentType } : {}) },
      body: s.body,
      signal: controller.signal,
    });
    // Streams are read to their end (bounded by the abort above).
    return { status: res.status, body: await res.text(), contentType: res.headers.get("content-type") ?? "" };
  } finally {
    clearTimeout(timer);
  }
}

/** The codes of every problem in a response: the body's own, and a stream's error event. */
function problemCodes(body: string): string[] {
  const codes: string[] = [];
  for (const m of body.matchAll(/"code":"([a-z_]+)"/g)) codes.push(m[1]!);
  return codes;
}

let attacker: string;
let bystander: string;
let admin: string;
const stored: { runId: string; run: unknown; threadMessages: unknown; context: unknown } = {} as never;

beforeAll(async () => {
  admin = ctx.key;
  attacker = (await createKey("attacker", { dataDir: ctx.server.dataDir })).key;
  bystander = (await createKey("bystander", { dataDir: ctx.server.dataDir })).key;
  // What must survive the fuzzing untouched: a run, a thread's history, an API-managed context.
  const res = await post(ctx.server, "/api/v1/generate/object", { input: "Invoice 1", type: "event", workflowSlug: "no-retry", callback: CALLBACK, schema: INVOICE_SCHEMA }, bystander);
  expect(res.status).toBe(200);
  stored.runId = res.json.metadata.runId;
  stored.run = (await get(ctx.server, `/api/v1/runs/${stored.runId}`, bystander)).json;
  await post(ctx.server, "/api/v1/stream/object", { input: "remember", workflowSlug: "no-retry", threadId: "keep-me", schema: INVOICE_SCHEMA }, bystander);
  stored.threadMessages = (await get(ctx.server, "/api/v1/threads/keep-me", bystander)).json.messages;
  await fetch(`${ctx.server.url}/api/v1/contexts/fz-keep`, { method: "PUT", headers: { "api-key": admin, "content-type": "application/json" }, body: JSON.stringify({ title: "Keep", content: "kept" }) });
  stored.context = (await get(ctx.server, "/api/v1/contexts/fz-keep", admin)).json;
});

describe("hostile-input fuzzing", () => {
  it(
    "never answers 5xx for genserve's own faults, stays up, serves another key and loses nothing",
    async () => {
      let sent = 0;
      const statuses = new Map<number, number>();
      await fc.assert(
        fc.asyncProperty(shot, async (s) => {
          const res = await send(s, s.admin ? admin : attacker);
          sent++;
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          const codes = problemCodes(res.body);
          expect(codes, `${s.method} ${s.path} → ${res.status} ${res.body.slice(0, 300)}`).not.toContain("internal");
          if (res.status >= 500) expect(codes.some((c) => UPSTREAM_FAULTS.has(c)), `${s.method} ${s.path} → ${res.status} ${res.body.slice(0, 300)}`).toBe(true);
          if (sent % 25 === 0) {
            expect((await get(ctx.server, "/healthz", null)).status).toBe(200);
            const other = await post(ctx.server, "/api/v1/generate/object", { input: "Invoice 2", type: "event", workflowSlug: "no-retry", callback: CALLBACK, schema: INVOICE_SCHEMA }, bystander);
            expect(other.status, other.text).toBe(200);
          }
        }),
        { numRuns: 1_000_000, seed: SEED, endOnFailure: BUDGET_MS <= 60_000, plugins: [fc.interruptAfterTimeLimit(BUDGET_MS)] },
      );
      expect(ctx.server.process.exitCode).toBeNull();
      expect(sent).toBeGreaterThan(50);
      // eslint-disable-next-line no-console
      console.log(`fuzz: ${sent} requests in ${BUDGET_MS} ms; statuses ${JSON.stringify(Object.fromEntries(statuses))}`);

      // Nothing stored before was lost or changed.
      const { deliveries: _now, ...run } = (await get(ctx.server, `/api/v1/runs/${stored.runId}`, bystander)).json;
      const { deliveries: _then, ...before } = stored.run as Record<string, unknown>;
      expect(run).toEqual(before); // deliveries go on being attempted; the run itself must not change
      expect((await get(ctx.server, "/api/v1/threads/keep-me", bystander)).json.messages).toEqual(stored.threadMessages);
      expect((await get(ctx.server, "/api/v1/contexts/fz-keep", admin)).json).toEqual(stored.context);
      expect((await get(ctx.server, "/readyz", null)).status).toBe(200);
    },
    BUDGET_MS + 120_000,
  );

  it("survives document bombs mixed in with ordinary documents", async () => {
    const bomb = await makeDocx(docxBody("<w:p><w:r><w:t>a</w:t></w:r></w:p>".repeat(400_000)));
    const fine = await makeDocx(docxBody("<w:p><w:r><w:t>ok</w:t></w:r></w:p>"));
    const results = await Promise.all(
      [bomb, fine, bomb, fine].map((doc) =>
        post(ctx.server, "/api/v1/generate/text", { input: "x", type: "event", workflowSlug: "no-retry", callback: CALLBACK, attachments: [{ file: doc.toString("base64"), mimeType: DOCX_TYPE }] }, attacker),
      ),
    );
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200].map((_, i) => (i % 2 === 0 ? 422 : 200)));
  });
});
