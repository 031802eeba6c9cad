import { describe, expect, it } from "vitest";
import { z } from "zod";
import { generateObjectRequest, generateTextRequest, streamObjectRequest } from "../api/requests";
import { ERROR_CODES } from "../errors";
import { openApiDocument } from "../http/table";
import { errorFromProblem } from "./api-error";
import { createClient } from "./client";
import { OPERATIONS } from "./operations";

type Operation = { operationId: string; requestBody?: { content: Record<string, { schema: { $ref?: string } }> }; responses: Record<string, { content?: Record<string, { schema?: { $ref?: string } }> }> };
const doc = openApiDocument("v1") as { paths: Record<string, Record<string, Operation>>; "x-error-codes": Record<string, { retryable: boolean }> };
const refTo = (name: string) => `#/components/schemas/${name}`;

describe("the client's operations", () => {
  it("are the route table's: path, method, operation id, request and answer shapes", () => {
    for (const [id, op] of Object.entries(OPERATIONS)) {
      const served = doc.paths[op.path]?.[op.method.toLowerCase()];
      expect(served, `${op.method} ${op.path}`).toBeDefined();
      expect(served!.operationId).toBe(id);
      if (op.request) expect(served!.requestBody?.content["application/json"]?.schema.$ref).toBe(refTo(op.request));
      else expect(served!.requestBody).toBeUndefined();
      for (const [status, shape] of Object.entries(op.responses)) {
        const content = served!.responses[status]?.content;
        if (shape === "stream") expect(Object.keys(content ?? {})).toContain("text/event-stream");
        else expect(content?.["application/json"]?.schema?.$ref, `${id} ${status}`).toBe(refTo(shape));
      }
    }
  });

  it("send bodies the server's own request shapes accept", async () => {
    const sent: { url: string; body: unknown; headers: Record<string, string> }[] = [];
    const fetch = async (url: RequestInfo | URL, init?: RequestInit) => {
      sent.push({ url: String(url), body: init?.body ? JSON.parse(String(init.body)) : undefined, headers: init?.headers as Record<string, string> });
      const metadata = { runId: "run_1", cost: "0", model: { name: "m", tag: "" }, durationInMs: 1, inputTokens: 1, outputTokens: 1 };
      if (String(url).includes("/stream/object")) return new Response(`id: 1\nevent: done\ndata: ${JSON.stringify({ runId: "run_1", object: { a: 1 }, metadata })}\n\n`, { headers: { "x-run-id": "run_1" } });
      if ((init?.headers as Record<string, string>).Prefer) return Response.json({ runId: "run_1", status: "queued" }, { status: 202 });
      return Response.json(String(url).includes("/text") ? { text: "t", metadata } : { object: { a: 1 }, metadata });
    };
    const client = createClient({ baseURL: "http://genserve.test/", apiKey: "gs_key", fetch });
    const schema = z.object({ a: z.number() });
    const callback = { url: "https://example.com/hook", customProperties: { ticket: 1 } };
    const common = { workflow: "extract-invoice@2", input: "x", contexts: ["tone"], attachments: [{ file: "https://example.com/a.pdf", mimeType: "application/pdf" }] };
    const { object } = await client.generateObject({ ...common, schema, callback, idempotencyKey: "k1" });
    expect(object.a).toBe(1);
    await client.generateText({ ...common, callback });
    await client.submitObject({ ...common, callback });
    await (await client.streamObject({ ...common, schema, threadId: "t-1" })).result();
    await (await client.streamObject({ input: "x", threadId: "t-1" })).result();
    expect(sent.map((s) => s.url)).toEqual([
      "http://genserve.test/api/v1/generate/object",
      "http://genserve.test/api/v1/generate/text",
      "http://genserve.test/api/v1/generate/object",
      "http://genserve.test/api/v1/stream/object",
      "http://genserve.test/api/v1/stream/object",
    ]);
    expect(generateObjectRequest.safeParse(sent[0]!.body).error).toBeUndefined();
    expect(sent[0]!.headers).toMatchObject({ "Api-Key": "gs_key", "Idempotency-Key": "k1" });
    expect(generateTextRequest.safeParse(sent[1]!.body).error).toBeUndefined();
    expect(sent[2]!.headers).toMatchObject({ Prefer: "respond-async" });
    expect(generateObjectRequest.safeParse(sent[2]!.body).error).toBeUndefined();
    expect(streamObjectRequest.safeParse(sent[3]!.body).error).toBeUndefined();
    expect(streamObjectRequest.safeParse(sent[4]!.body).error).toBeUndefined();
    // The zod schema went as JSON Schema.
    expect((sent[0]!.body as { schema: unknown }).schema).toMatchObject({ type: "object", properties: { a: { type: "number" } }, required: ["a"] });
  });

  it("call retryable exactly what the document's error registry does", () => {
    for (const [code, spec] of Object.entries(doc["x-error-codes"])) {
      expect(errorFromProblem(ERROR_CODES[code as keyof typeof ERROR_CODES].status, { code }).retryable, code).toBe(spec.retryable);
    }
  });
});
