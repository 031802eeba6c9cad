import OpenAI from "openai";
import { beforeAll, describe, expect, it } from "vitest";
import { INVOICE_SCHEMA } from "../helpers/config";
import type { FakeUpstream } from "../helpers/fake-upstream";
import { cli, get, post, type GenserveServer } from "../helpers/genserve";
import { waitUntil } from "../helpers/receiver";
import { useGenserve } from "../helpers/suite";

// The OpenAI-compatible endpoints through the official `openai` client (v6), against the real
// server and the fake upstream: every call an ordinary genserve run.

const ctx = useGenserve();
let upstream: FakeUpstream;
let server: GenserveServer;
let key: string;
let client: OpenAI;
beforeAll(() => {
  ({ upstream, server, key } = ctx);
  // No retries: a refusal must reach the test as it was answered.
  client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: key, maxRetries: 0 });
});

const invoice = { number: "INV-7", total: 120.5, currency: "EUR" };
const invoiceFormat = { type: "json_schema" as const, json_schema: { name: "invoice", schema: INVOICE_SCHEMA, strict: true } };

describe("POST /v1/chat/completions with the openai client", () => {
  it("answers a text run as a chat completion whose id is the run's, with history from the earlier messages", async () => {
    upstream.reply({ content: "Forty-two.", usage: { prompt_tokens: 11, completion_tokens: 3 } });
    const { data: completion, response } = await client.chat.completions
      .create({
        model: "extract-invoice",
        messages: [
          { role: "user", content: "What is six times seven?" },
          { role: "assistant", content: "Let me think." },
          { role: "user", content: [{ type: "text", text: "Just the number," }, { type: "text", text: "in words." }] },
        ],
      })
      .withResponse();
    expect(completion.object).toBe("chat.completion");
    expect(completion.id).toMatch(/^run_[0-9A-Z]{26}$/);
    expect(response.headers.get("x-run-id")).toBe(completion.id);
    expect(completion.model).toBe("extract-invoice");
    expect(completion.choices[0]!.message).toMatchObject({ role: "assistant", content: "Forty-two." });
    expect(completion.choices[0]!.finish_reason).toBe("stop");
    expect(completion.usage).toEqual({ prompt_tokens: 11, completion_tokens: 3, total_tokens: 14 });

    // The model saw the workflow's system prompt, the history, then the input.
    const sent = upstream.requests[0]!.body.messages;
    expect(sent[0]!.role).toBe("system");
    expect(sent.slice(1)).toEqual([
      { role: "user", content: "What is six times seven?" },
      { role: "assistant", content: "Let me think." },
      { role: "user", content: "Just the number,\nin words." },
    ]);
    const run = await get(server, `/api/v1/runs/${completion.id}`, key);
    expect(run.json).toMatchObject({ id: completion.id, operation: "generate.text", status: "succeeded", output: "Forty-two." });
    // The earlier turns are stored with the run's request, and a replay sends them again.
    expect(run.json.history).toEqual(sent.slice(1, 3));
    upstream.reply({ content: "Forty-two." });
    const replay = await post(server, `/api/v1/runs/${completion.id}/replay`, {}, key);
    expect(replay.status, JSON.stringify(replay.json)).toBe(201);
    expect(upstream.requests[1]!.body.messages.slice(1)).toEqual(sent.slice(1));
    expect((await get(server, `/api/v1/runs/${replay.json.runId}`, key)).json.history).toEqual(sent.slice(1, 3));
  });

  it("streams a text run in chat.completion.chunk events, with usage when asked", async () => {
    upstream.reply({ content: "Streamed text answer.", usage: { prompt_tokens: 5, completion_tokens: 4 } });
    const stream = await client.chat.completions.create({ model: "extract-invoice", messages: [{ role: "user", content: "Say something." }], stream: true, stream_options: { include_usage: true } });
    let text = "";
    let usage: OpenAI.CompletionUsage | null | undefined;
    let id = "";
    let finish: string | null = null;
    for await (const chunk of stream) {
      expect(chunk.object).toBe("chat.completion.chunk");
      id = chunk.id;
      text += chunk.choices[0]?.delta.content ?? "";
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe("Streamed text answer.");
    expect(finish).toBe("stop");
    expect(usage).toEqual({ prompt_tokens: 5, completion_tokens: 4, total_tokens: 9 });
    expect((await get(server, `/api/v1/runs/${id}`, key)).json).toMatchObject({ status: "succeeded", operation: "generate.text" });
  });

  it("makes response_format json_schema an object run: validated, retried, stored in the runs table", async () => {
    // The first output is invalid: genserve retries with the errors fed back, as every object run.
    upstream.reply({ content: JSON.stringify({ number: "INV-7", total: -1, currency: "GBP" }) }, { content: JSON.stringify(invoice), usage: { prompt_tokens: 20, completion_tokens: 10 } });
    const completion = await client.chat.completions.create({ model: "extract-invoice", messages: [{ role: "user", content: "Invoice INV-7, 120.50 EUR" }], response_format: invoiceFormat });
    expect(JSON.parse(completion.choices[0]!.message.content!)).toEqual(invoice);
    expect(upstream.requests).toHaveLength(2);
    expect(upstream.requests[0]!.body.response_format?.json_schema?.schema).toMatchObject({ required: ["number", "total", "currency"] });

    const listed = await get(server, `/api/v1/runs?workflowSlug=extract-invoice&limit=100`, key);
    const row = (listed.json.runs as { id: string; operation: string; status: string }[]).find((r) => r.id === completion.id);
    expect(row).toMatchObject({ operation: "generate.object", status: "succeeded" });
    expect((await get(server, `/api/v1/runs/${completion.id}`, key)).json).toMatchObject({ output: invoice, attempts: 2 });
  });

  it("streams an object run as it is generated, ending with the validated JSON", async () => {
    upstream.reply({ content: JSON.stringify(invoice), chunkSize: 5 });
    const stream = await client.chat.completions.create({ model: "extract-invoice", messages: [{ role: "user", content: "Invoice INV-7" }], response_format: invoiceFormat, stream: true });
    const pieces: string[] = [];
    let id = "";
    for await (const chunk of stream) {
      id = chunk.id;
      const piece = chunk.choices[0]?.delta.content;
      if (piece) pieces.push(piece);
    }
    expect(pieces.length).toBeGreaterThan(1);
    expect(JSON.parse(pieces.join(""))).toEqual(invoice);
    expect((await get(server, `/api/v1/runs/${id}`, key)).json).toMatchObject({ status: "succeeded", operation: "stream.object", output: invoice });
  });

  it("ends a stream whose run failed with the error in OpenAI's shape, which the client throws", async () => {
    // no-retry: one attempt; the model's number is not a string, so the run fails output_invalid.
    upstream.reply({ content: JSON.stringify({ number: 7, total: 1, currency: "EUR" }), chunkSize: 4 });
    const stream = await client.chat.completions.create({ model: "no-retry", messages: [{ role: "user", content: "Invoice" }], response_format: invoiceFormat, stream: true });
    const failure = await (async () => {
      for await (const chunk of stream) void chunk;
    })().then(
      () => null,
      (e: unknown) => e,
    );
    expect(failure).toBeInstanceOf(OpenAI.APIError);
    expect((failure as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({ type: "server_error", code: "output_invalid", param: null, message: expect.stringContaining("/number: must be string") });
  });

  it("ends a stream at a restart (OpenAI's clients cannot take text back) while the run retries and succeeds", async () => {
    // The first attempt streams a few pieces, then its total breaks the schema: genserve retries.
    upstream.reply({ content: JSON.stringify({ number: "INV-7", total: -1, currency: "EUR" }), chunkSize: 4 }, { content: JSON.stringify(invoice) });
    const stream = await client.chat.completions.create({ model: "extract-invoice", messages: [{ role: "user", content: "Invoice" }], response_format: invoiceFormat, stream: true });
    let id = "";
    let text = "";
    const failure = await (async () => {
      for await (const chunk of stream) {
        id = chunk.id;
        text += chunk.choices[0]?.delta.content ?? "";
      }
    })().then(
      () => null,
      (e: unknown) => e,
    );
    expect(text.startsWith('{"number":"INV-7"')).toBe(true);
    expect((failure as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({ code: "output_restarted", message: expect.stringContaining(`/api/v1/runs/${id}`) });
    await waitUntil(async () => (await get(server, `/api/v1/runs/${id}`, key)).json.status === "succeeded", "the run to succeed on its retry");
    expect((await get(server, `/api/v1/runs/${id}`, key)).json).toMatchObject({ output: invoice, attempts: 2 });
  });

  it("ends the raw body right after the output_restarted error, while the run's retry is still held", async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    upstream.reply({ content: JSON.stringify({ number: "INV-7", total: -1, currency: "EUR" }), chunkSize: 4 }, { content: JSON.stringify(invoice), waitFor: held });
    const res = await fetch(`${server.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify({ model: "extract-invoice", messages: [{ role: "user", content: "Invoice" }], response_format: invoiceFormat, stream: true }),
    });
    expect(res.status).toBe(200);
    const id = res.headers.get("x-run-id")!;
    // The whole body, read to its end while the second attempt cannot answer: it ends at the error.
    const body = await res.text();
    const events = body.trimEnd().split("\n\n");
    expect(events.at(-1)).toMatch(/^data: \{"error":\{.*"code":"output_restarted"/);
    expect(body).not.toContain(": ping");
    expect((await get(server, `/api/v1/runs/${id}`, key)).json.status).toBe("running");
    release();
    await waitUntil(async () => (await get(server, `/api/v1/runs/${id}`, key)).json.status === "succeeded", "the run to succeed on its retry");
  });

  it("tells the client not to retry a run that failed (it ran and was charged): one run, not three", async () => {
    // The client's default: two retries of what X-Should-Retry allows (or of every 5xx without it).
    const retrying = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: key });
    upstream.reply({ content: JSON.stringify({ number: 7, total: 1, currency: "EUR" }) });
    const failure = await retrying.chat.completions.create({ model: "no-retry", messages: [{ role: "user", content: "Invoice" }], response_format: invoiceFormat }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(OpenAI.InternalServerError);
    expect(failure).toMatchObject({ status: 502, code: "output_invalid" });
    expect((failure as InstanceType<typeof OpenAI.APIError>).headers?.get("x-should-retry")).toBe("false");
    expect(upstream.requests).toHaveLength(1);
  });

  it("says finish_reason length when the model reached its output limit, and so does the run's metadata", async () => {
    upstream.reply({ content: "Once upon a", finishReason: "length" });
    const completion = await client.chat.completions.create({ model: "extract-invoice", messages: [{ role: "user", content: "Tell a story." }] });
    expect(completion.choices[0]!.finish_reason).toBe("length");
    expect((completion as unknown as { genserve: { finishReason?: string } }).genserve.finishReason).toBe("length");

    upstream.reply({ content: "Once upon a", finishReason: "length" });
    const stream = await client.chat.completions.create({ model: "extract-invoice", messages: [{ role: "user", content: "Tell a story." }], stream: true });
    let finish: string | null = null;
    for await (const chunk of stream) finish = chunk.choices[0]?.finish_reason ?? finish;
    expect(finish).toBe("length");
  });

  it("refuses earlier messages that do not fit the model's window with context_length_exceeded, dropping none", async () => {
    const long = "An earlier turn that goes on and on. ".repeat(250);
    const refused = await client.chat.completions
      .create({ model: "small-window", messages: [{ role: "user", content: long }, { role: "assistant", content: "Noted." }, { role: "user", content: "And now?" }] })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect(refused).toMatchObject({ status: 400, code: "context_length_exceeded", param: "messages", type: "invalid_request_error" });
    expect(upstream.requests).toHaveLength(0);
  });

  it("answers a streamed text run's head at once and cancels the run when the client closes the stream", async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    upstream.reply({ content: "Never sent.", waitFor: held });
    const abort = new AbortController();
    const res = await fetch(`${server.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify({ model: "extract-invoice", messages: [{ role: "user", content: "Say something." }], stream: true }),
      signal: abort.signal,
    });
    // The head came while the model is held: the run's id, the stream's type.
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const id = res.headers.get("x-run-id")!;
    expect(id).toMatch(/^run_/);
    await waitUntil(async () => upstream.requests.length === 1, "the model to be called");
    abort.abort();
    await waitUntil(async () => (await get(server, `/api/v1/runs/${id}`, key)).json.status === "cancelled", "the run to be cancelled");
    release();
  });

  it("takes a last user message of images alone as the run's input", async () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]).toString("base64");
    upstream.reply({ content: "A picture." });
    const completion = await client.chat.completions.create({ model: "look", messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: `data:image/png;base64,${png}` } }] }] });
    expect(completion.choices[0]!.message.content).toBe("A picture.");
    const sent = upstream.requests[0]!.body.messages.at(-1)!;
    expect(JSON.stringify(sent.content)).toContain("data:image/png;base64,");
  });

  it("answers paths under /v1 it does not serve with a 404 in OpenAI's shape", async () => {
    const retrieved = await client.models.retrieve("extract-invoice").catch((e: unknown) => e);
    expect(retrieved).toBeInstanceOf(OpenAI.NotFoundError);
    const raw = await post(server, "/v1/embeddings", { model: "extract-invoice", input: "hi" }, key);
    expect(raw.status).toBe(404);
    expect(raw.json).toEqual({ error: { message: expect.stringContaining("POST /v1/embeddings"), type: "not_found_error", param: null, code: "not_found" } });
  });

  it("refuses parameters genserve does not honour, naming each, in OpenAI's error shape", async () => {
    const base = { model: "extract-invoice", messages: [{ role: "user" as const, content: "hi" }] };
    const cases: [Record<string, unknown>, string][] = [
      [{ tools: [{ type: "function", function: { name: "f", parameters: {} } }] }, "tools"],
      [{ n: 2 }, "n"],
      [{ logprobs: true }, "logprobs"],
      [{ temperature: 0.3 }, "temperature"],
      [{ store: false }, "store"],
      [{ stream_options: { include_usage: true } }, "stream_options"],
      [{ messages: [{ role: "system", content: "Be terse." }, { role: "user", content: "hi" }] }, "messages[0].role"],
      [{ response_format: { type: "json_schema", json_schema: { name: "x", schema: { type: "object", properties: { a: { type: "nope" } } } } } }, "response_format.json_schema.schema.properties.a.type"],
    ];
    for (const [extra, param] of cases) {
      const error = await client.chat.completions.create({ ...base, ...extra } as never).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error, param).toBeInstanceOf(OpenAI.BadRequestError);
      const e = error as InstanceType<typeof OpenAI.BadRequestError>;
      expect(e.status).toBe(400);
      expect(e.param, JSON.stringify(e.error)).toBe(param);
      expect(e.type).toBe("invalid_request_error");
      expect(e.message).toContain(param.split(".")[0]!.split("[")[0]!);
    }
    // Nothing ran.
    expect(upstream.requests).toHaveLength(0);
  });

  it("answers a bad key with 401 and an unknown workflow with 404 model_not_found, in OpenAI's shape", async () => {
    const stranger = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: "gs_not-a-real-key", maxRetries: 0 });
    const unauthorized = await stranger.chat.completions.create({ model: "extract-invoice", messages: [{ role: "user", content: "hi" }] }).catch((e: unknown) => e);
    expect(unauthorized).toBeInstanceOf(OpenAI.AuthenticationError);
    expect((unauthorized as InstanceType<typeof OpenAI.AuthenticationError>).code).toBe("invalid_api_key");

    const raw = await post(server, "/v1/chat/completions", { model: "x", messages: [] }, null);
    expect(raw.status).toBe(401);
    expect(raw.json).toEqual({ error: { message: expect.stringContaining("Authorization: Bearer"), type: "authentication_error", param: null, code: "invalid_api_key" } });

    const missing = await client.chat.completions.create({ model: "no-such-workflow", messages: [{ role: "user", content: "hi" }] }).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
    expect(missing).toMatchObject({ code: "model_not_found", param: "model" });
  });

  it("refuses a workflow the key may not run (403), and lists only those it may in /v1/models", async () => {
    const created = await post(server, "/api/v1/keys", { name: "openai-limited", limits: { workflows: ["no-retry"] } }, key);
    expect(created.status).toBe(201);
    const limited = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: created.json.key as string, maxRetries: 0 });
    const refused = await limited.chat.completions.create({ model: "extract-invoice@config", messages: [{ role: "user", content: "hi" }] }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect(refused).toMatchObject({ status: 403, param: "model", type: "permission_error" });
    expect(upstream.requests).toHaveLength(0);

    const models = await limited.models.list();
    expect(models.data.map((m) => m.id)).toEqual(["no-retry"]);
    const all = await client.models.list();
    expect(all.data.map((m) => m.id)).toEqual(expect.arrayContaining(["extract-invoice", "no-retry", "support"]));
    expect(all.data[0]).toMatchObject({ object: "model", owned_by: "genserve" });
  });

  it("runs API-managed versions and labels by reference, json_object on the version's default schema; genserve types names them all", async () => {
    const put = async (path: string, body: unknown) => {
      const res = await fetch(`${server.url}${path}`, { method: "PUT", headers: { "content-type": "application/json", "api-key": key }, body: JSON.stringify(body) });
      expect(res.status, await res.clone().text()).toBeLessThan(300);
    };
    const one = { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false };
    const two = { type: "object", properties: { city: { type: "string" }, country: { enum: ["FR", "DE"] } }, required: ["city", "country"] };
    await put("/api/v1/workflows/typed-places", { model: "fast", instructions: "Find the place.", schema: one });
    await put("/api/v1/workflows/typed-places", { model: "fast", instructions: "Find the place.", schema: two });
    await put("/api/v1/workflows/typed-places/labels/staging", { version: 1 });

    const ids = (await client.models.list()).data.map((m) => m.id);
    expect(ids).toEqual(expect.arrayContaining(["typed-places", "typed-places@staging"]));

    upstream.reply({ content: JSON.stringify({ city: "Lyon" }) });
    const completion = await client.chat.completions.create({ model: "typed-places@staging", messages: [{ role: "user", content: "Lyon" }], response_format: { type: "json_object" } });
    expect(JSON.parse(completion.choices[0]!.message.content!)).toEqual({ city: "Lyon" });
    expect(upstream.requests[0]!.body.response_format?.json_schema?.schema).toMatchObject({ required: ["city"], additionalProperties: false });
    expect((await get(server, `/api/v1/runs/${completion.id}`, key)).json).toMatchObject({ workflowVersion: "1", workflowLabel: "staging" });

    const module = await cli(["types"], { dataDir: server.dataDir, configFile: server.configFile });
    expect(module).toContain('"typed-places": { input: string; output: TypedPlacesV2Output };');
    expect(module).toContain('"typed-places@staging": { input: string; output: TypedPlacesV1Output };');
    expect(module).toContain('"typed-places@1": { input: string; output: TypedPlacesV1Output };');
    expect(module).toContain('"extract-invoice@config": { input: string; output: ExtractInvoiceConfigOutput };');
    expect(module).toContain('country: "FR" | "DE";');
  });
});
