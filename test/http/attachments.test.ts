import http from "node:http";
import JSZip from "jszip";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CALLBACK, testConfig } from "../helpers/config";
import { get, post, startGenserve, tempDir, writeConfig, type GenserveServer } from "../helpers/genserve";
import { DOCX_TYPE, docxBody, makeDocx, makePdf } from "../helpers/documents";
import { useGenserve } from "../helpers/suite";

// Attachment fetching is tested against a file server on loopback: allowed here (allowPrivate),
// and refused by a second server that keeps the default.
const ctx = useGenserve(`
network:
  allowPrivate: true
limits:
  attachmentBytes: 4096
  attachmentsTotalBytes: 6000
  attachmentFetchTimeoutMs: 1000
`);

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);
let files: http.Server;
let base = "";
let strict: GenserveServer;

beforeAll(async () => {
  files = http.createServer((req, res) => {
    const routes: Record<string, () => void> = {
      "/notes.txt": () => res.writeHead(200, { "content-type": "text/plain; charset=utf-8" }).end("Paid in full on 2026-11-02."),
      "/page.html": () => res.writeHead(200, { "content-type": "text/html" }).end("<html><head><script>alert(1)</script></head><body><h1>Terms</h1><p>Net <b>30</b> days.</p></body></html>"),
      "/untyped": () => res.writeHead(200).end(PNG),
      "/big": () => res.writeHead(200, { "content-type": "text/plain" }).end("x".repeat(5000)),
      "/chunked-big": () => {
        res.writeHead(200, { "content-type": "text/plain" });
        for (let i = 0; i < 10; i++) res.write("y".repeat(1000));
        res.end();
      },
      "/slow": () => setTimeout(() => res.writeHead(200).end("late"), 2_000),
      "/missing": () => res.writeHead(404).end(),
      "/hop": () => res.writeHead(302, { location: "/notes.txt" }).end(),
      "/loop": () => res.writeHead(302, { location: "/loop" }).end(),
      "/to-metadata": () => res.writeHead(302, { location: "http://169.254.169.254/latest/meta-data" }).end(),
    };
    (routes[req.url ?? ""] ?? (() => res.writeHead(404).end()))();
  });
  await new Promise<void>((resolve) => files.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
  const dir = tempDir();
  strict = await startGenserve({ configFile: writeConfig(dir, testConfig(ctx.upstream.url)), dataDir: `${dir}/data` });
});
afterAll(async () => {
  await strict?.stop();
  await new Promise((r) => files?.close(r));
});

const text = (attachments: unknown[], workflowSlug = "no-retry", server: { url: string } = ctx.server, key = ctx.key) =>
  post(server, "/api/v1/generate/text", { input: "Summarise", type: "event", callback: CALLBACK, workflowSlug, attachments }, key);
const system = () => ctx.upstream.requests.at(-1)!.body.messages.find((m) => m.role === "system")!.content as string;

describe("attachments by URL", () => {
  it("fetches text and HTML into the prompt, records metadata, follows a redirect", async () => {
    const res = await text([{ file: `${base}/notes.txt` }, { file: `${base}/page.html` }, { file: `${base}/hop`, mimeType: "text/plain" }]);
    expect(res.status).toBe(200);
    expect(system()).toContain('<attachment index="0" type="text/plain">\nPaid in full on 2026-11-02.\n</attachment>');
    expect(system()).toMatch(/<attachment index="1" type="text\/html">\nTERMS\s+Net 30 days.\n<\/attachment>/);
    expect(system()).not.toContain("alert(1)");
    expect(system()).toContain('<attachment index="2" type="text/plain">\nPaid in full');
    const run = await get(ctx.server, `/api/v1/runs/${res.json.metadata.runId}`, ctx.key);
    expect(run.json.attachments[0]).toMatchObject({ index: 0, source: "url", url: `${base}/notes.txt`, mimeType: "text/plain", bytes: 27, textChars: 27 });
  });

  it("sniffs the type when neither the request nor the server names it", async () => {
    const res = await text([{ file: `${base}/untyped` }]);
    expect(res.status).toBe(422);
    expect(res.json).toMatchObject({ code: "attachment_unsupported" });
    expect(res.json.detail).toContain('"free"');
  });

  it("refuses sizes over the limits while reading", async () => {
    expect((await text([{ file: `${base}/big` }])).status).toBe(413);
    expect((await text([{ file: `${base}/chunked-big` }])).status).toBe(413);
    const two = Buffer.from("z".repeat(3500)).toString("base64");
    const total = await text([{ file: two, mimeType: "text/plain" }, { file: two, mimeType: "text/plain" }]);
    expect(total.status).toBe(413);
    expect(total.json.detail).toContain("limits.attachmentsTotalBytes");
  });

  it("reports fetch failures as 502 naming the attachment", async () => {
    const missing = await text([{ file: `${base}/notes.txt` }, { file: `${base}/missing` }]);
    expect(missing.status).toBe(502);
    expect(missing.json).toMatchObject({ code: "attachment_fetch_failed", errors: [{ path: "/attachments/1/file", message: "the server answered 404" }] });
    const slow = await text([{ file: `${base}/slow` }]);
    expect(slow.status).toBe(502);
    expect(slow.json.errors[0].message).toMatch(/longer than 1000 ms/);
    const loop = await text([{ file: `${base}/loop` }]);
    expect(loop.status).toBe(400);
    expect(loop.json).toMatchObject({ code: "attachment_fetch_refused", errors: [{ message: "more than 3 redirects" }] });
  });

  it("refuses private addresses by default: literals, IPv6 and numeric forms, hostnames and redirects", async () => {
    const port = (files.address() as AddressInfo).port;
    const cases = [
      `http://127.0.0.1:${port}/notes.txt`,
      `http://localhost:${port}/notes.txt`,
      `http://[::1]:${port}/notes.txt`,
      `http://[::ffff:127.0.0.1]:${port}/notes.txt`,
      `http://2130706433:${port}/notes.txt`,
      `http://0177.0.0.1:${port}/notes.txt`,
      "http://169.254.169.254/latest/meta-data",
      "http://10.0.0.1/x",
    ];
    for (const url of cases) {
      const res = await text([{ file: url, mimeType: "text/plain" }], "no-retry", strict, strict.adminKey!);
      expect(res.status, url).toBe(400);
      expect(res.json.code, url).toBe("attachment_fetch_refused");
      expect(res.text).not.toContain("127.0.0.1:");
    }
    // Redirects to private addresses: lib/attachments/fetch-url.test.ts (it treats this server as public).
  });

  it("refuses a declared type that contradicts the bytes", async () => {
    const res = await text([{ file: PNG.toString("base64"), mimeType: "application/pdf" }]);
    expect(res.status).toBe(400);
    expect(res.json.errors).toEqual([{ path: "/attachments/0/mimeType", message: "says application/pdf but the content is image/png" }]);
  });
});

describe("documents", () => {
  it("extracts the text of a PDF page by page; encrypted and image-only PDFs are unreadable", async () => {
    const res = await text([{ file: makePdf("Invoice total 99 EUR").toString("base64"), mimeType: "application/pdf" }]);
    expect(res.status).toBe(200);
    expect(system()).toContain('<attachment index="0" type="application/pdf">\n[page 1]\nInvoice total 99 EUR\n</attachment>');
    const encrypted = await text([{ file: makePdf("secret", true).toString("base64"), mimeType: "application/pdf" }]);
    expect(encrypted.status).toBe(422);
    expect(encrypted.json).toMatchObject({ code: "attachment_unreadable", errors: [{ message: "the PDF is encrypted (password-protected)" }] });
    const scanned = await text([{ file: makePdf(null).toString("base64"), mimeType: "application/pdf" }]);
    expect(scanned.status).toBe(422);
    expect(scanned.json.errors[0].message).toMatch(/no text layer/);
  });

  it("extracts the text of a DOCX (made here with JSZip) and refuses a broken one", async () => {
    const docx = (await makeDocx(docxBody("<w:p><w:r><w:t>Contract total: 4,200 EUR.</w:t></w:r></w:p><w:p><w:r><w:t>Due in 30 days.</w:t></w:r></w:p>"))).toString("base64");
    const type = DOCX_TYPE;
    const res = await text([{ file: docx, mimeType: type }]);
    expect(res.status).toBe(200);
    expect(system()).toContain(`<attachment index="0" type="${type}">\nContract total: 4,200 EUR.\n\nDue in 30 days.\n</attachment>`);

    const broken = await new JSZip().file("hello.txt", "not a document").generateAsync({ type: "nodebuffer" });
    const unreadable = await text([{ file: broken.toString("base64"), mimeType: type }]);
    expect(unreadable.status).toBe(422);
    expect(unreadable.json).toMatchObject({ code: "attachment_unreadable", errors: [{ path: "/attachments/0/file" }] });
  });
});

describe("the model's context window", () => {
  it("refuses a prompt that cannot fit it, with the numbers", async () => {
    const big = "word ".repeat(1500); // ~7500 characters, ~1900 tokens
    const res = await post(ctx.server, "/api/v1/generate/text", { input: big, type: "event", callback: CALLBACK, workflowSlug: "small-window" }, ctx.key);
    expect(res.status).toBe(413);
    expect(res.json.detail).toMatch(/about \d+ tokens; model "small" has a 2000-token window, 500 of them kept for the output/);
  });
});

describe("images", () => {
  it("reach a vision model as image parts and are refused for one without vision", async () => {
    const res = await text([{ file: `data:image/png;base64,${PNG.toString("base64")}` }], "look");
    expect(res.status).toBe(200);
    const user = ctx.upstream.requests.at(-1)!.body.messages.at(-1)!;
    expect(user.content).toEqual([
      { type: "text", text: "Summarise" },
      { type: "image_url", image_url: { url: `data:image/png;base64,${PNG.toString("base64")}` } },
    ]);
    const refused = await text([{ file: PNG.toString("base64"), mimeType: "image/png" }], "no-retry");
    expect(refused.status).toBe(422);
    expect(refused.json.code).toBe("attachment_unsupported");
  });
});
