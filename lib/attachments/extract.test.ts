import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_LIMITS } from "../config/schema";
import { isGenserveError } from "../errors";
import { docxBody, makeDocx, makePdf } from "../../test/helpers/documents";
import { DocumentExtractor, type ExtractLimits } from "./extract";

const file = fileURLToPath(new URL("./extract-worker.mjs", import.meta.url));
const extractors: DocumentExtractor[] = [];
const extractor = (limits: Partial<ExtractLimits> = {}) => {
  const e = new DocumentExtractor(file, { ...DEFAULT_LIMITS, extractWorkers: 1, ...limits });
  extractors.push(e);
  return e;
};
afterEach(async () => {
  await Promise.all(extractors.splice(0).map((e) => e.close()));
});

const failure = async (promise: Promise<unknown>) => {
  const error = await promise.then(() => null, (e: unknown) => e);
  if (!isGenserveError(error)) throw new Error(`expected a GenserveError, got ${String(error)}`);
  return { code: error.code, message: error.errors?.[0]?.message ?? "", path: error.errors?.[0]?.path };
};

// 90,000 paragraphs: under the default element limit, but a DOM far larger than 32 MB of heap.
const heavy = () => makeDocx(docxBody("<w:p><w:r><w:t>word</w:t></w:r></w:p>".repeat(90_000)));

describe("DocumentExtractor", () => {
  it("reads DOCX, PDF and HTML in a worker", async () => {
    const e = extractor();
    expect(await e.text("docx", await makeDocx(docxBody("<w:p><w:r><w:t>Hello</w:t></w:r></w:p>")), 0)).toBe("Hello");
    expect(await e.text("pdf", makePdf("Total 5", false, 2), 0)).toBe("[page 1]\nTotal 5\n\n[page 2]\nTotal 5");
    expect(await e.text("html", Buffer.from("<p>Net <b>30</b></p><script>x()</script>"), 0)).toBe("Net 30");
  });

  it("stops a document that needs more heap than allowed, names the limit, and reads the next one", async () => {
    const e = extractor({ attachmentExtractMemoryMb: 32 });
    expect(await failure(e.text("docx", await heavy(), 3))).toEqual({
      code: "attachment_unreadable",
      path: "/attachments/3/file",
      message: expect.stringMatching(/more than 32 MB of memory \(limits\.attachmentExtractMemoryMb\)/),
    });
    expect(e.status().replaced).toBe(1);
    expect(await e.text("html", Buffer.from("<p>still here</p>"), 0)).toBe("still here");
  });

  it("stops a document that takes longer than allowed", async () => {
    const e = extractor({ attachmentExtractTimeoutMs: 100 });
    expect((await failure(e.text("docx", await heavy(), 0))).message).toMatch(/longer than 100 ms \(limits\.attachmentExtractTimeoutMs\)/);
  });

  it("refuses a PDF with more pages than limits.attachmentPages, and non-UTF-8 HTML", async () => {
    const e = extractor({ attachmentPages: 3 });
    expect((await failure(e.text("pdf", makePdf("x", false, 4), 0))).message).toMatch(/4 pages; the limit is 3 \(limits\.attachmentPages\)/);
    expect(await failure(e.text("html", Buffer.from([0x3c, 0x70, 0x3e, 0xff, 0xfe]), 1))).toMatchObject({ code: "validation_failed", path: "/attachments/1/file" });
  });
});
