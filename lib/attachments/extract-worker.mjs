// Worker thread that turns documents (DOCX, PDF, HTML) into text. Parsers build whole document
// trees in memory, and a small file can unpack to a huge one (a 400 KB DOCX to 136 MB of XML): here
// that happens under the pool's heap limit and time limit (extract.ts), never on the server's event
// loop, and the sizes that can be known before parsing are checked first. Plain JavaScript so that
// Node loads it as it is, from the package, under both the CLI and the Next.js server bundle.
import { parentPort } from "node:worker_threads";
import { convert as htmlToText } from "html-to-text";
import mammoth from "mammoth";
import yauzl from "yauzl";

class Unreadable extends Error {}
class NotUtf8 extends Error {}

/** Elements in markup: each "<" that opens a tag (not "</", "<?" or "<!"). Works across chunks. */
function elementCounter() {
  let count = 0;
  let open = false;
  return {
    push(bytes) {
      for (let i = 0; i < bytes.length; i++) {
        const b = bytes[i];
        if (open && b !== 0x2f && b !== 0x3f && b !== 0x21) count++;
        open = b === 0x3c;
      }
    },
    get count() {
      return count;
    },
  };
}

const isMarkupPart = (name) => /\.(xml|rels)$/i.test(name);

/**
 * Checks a DOCX (a ZIP of XML parts) before mammoth parses it: at most `maxEntries` entries, and the
 * XML parts, actually inflated (declared sizes can lie), at most `maxUnpackedBytes` and
 * `maxElements` elements in all. Media entries are not inflated: raw text extraction never reads them.
 */
function inspectDocx(buffer, limits) {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(buffer, { lazyEntries: true, validateEntrySizes: true, strictFileNames: false }, (error, zip) => {
      if (error) return reject(new Unreadable("not a readable DOCX document"));
      let entries = 0;
      let unpacked = 0;
      const elements = elementCounter();
      const fail = (reason) => {
        zip.close();
        reject(new Unreadable(reason));
      };
      zip.on("error", () => fail("not a readable DOCX document"));
      zip.on("end", () => resolve());
      zip.on("entry", (entry) => {
        if (++entries > limits.maxEntries) return fail(`the DOCX has more than ${limits.maxEntries} parts`);
        if (!isMarkupPart(entry.fileName)) return zip.readEntry();
        if (unpacked + entry.uncompressedSize > limits.maxUnpackedBytes) {
          return fail(`the DOCX unpacks to more than ${limits.maxUnpackedBytes} bytes of XML (limits.attachmentUnpackedBytes)`);
        }
        zip.openReadStream(entry, (openError, stream) => {
          if (openError) return fail("not a readable DOCX document");
          stream.on("data", (chunk) => {
            unpacked += chunk.length;
            elements.push(chunk);
            if (unpacked > limits.maxUnpackedBytes) {
              stream.destroy();
              fail(`the DOCX unpacks to more than ${limits.maxUnpackedBytes} bytes of XML (limits.attachmentUnpackedBytes)`);
            } else if (elements.count > limits.maxElements) {
              stream.destroy();
              fail(`the DOCX has more than ${limits.maxElements} XML elements (limits.attachmentElements)`);
            }
          });
          stream.on("error", () => fail("not a readable DOCX document"));
          stream.on("end", () => zip.readEntry());
        });
      });
      zip.readEntry();
    });
  });
}

async function docx(bytes, limits) {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  await inspectDocx(buffer, limits);
  let text;
  try {
    text = (await mammoth.extractRawText({ buffer })).value.trim();
  } catch {
    throw new Unreadable("not a readable DOCX document");
  }
  if (!text) throw new Unreadable("the DOCX document has no text");
  return text;
}

function html(bytes, limits) {
  const elements = elementCounter();
  elements.push(bytes);
  if (elements.count > limits.maxElements) throw new Unreadable(`the HTML has more than ${limits.maxElements} elements (limits.attachmentElements)`);
  let source;
  try {
    source = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new NotUtf8();
  }
  return htmlToText(source, { wordwrap: false, selectors: [{ selector: "a", options: { ignoreHref: true } }, { selector: "img", format: "skip" }] });
}

/** The text of a PDF page by page (pdf.js); encrypted and image-only documents are unreadable. */
async function pdf(bytes, limits) {
  const { getDocument } = await import("pdfjs-dist/legacy/build/pdf.mjs");
  let document;
  try {
    document = await getDocument({ data: bytes, isEvalSupported: false, disableFontFace: true, useSystemFonts: false, verbosity: 0 }).promise;
  } catch (error) {
    if (error?.name === "PasswordException") throw new Unreadable("the PDF is encrypted (password-protected)");
    throw new Unreadable("not a readable PDF document");
  }
  try {
    if (document.numPages > limits.maxPages) throw new Unreadable(`the PDF has ${document.numPages} pages; the limit is ${limits.maxPages} (limits.attachmentPages)`);
    const pages = [];
    let chars = 0;
    for (let n = 1; n <= document.numPages; n++) {
      const content = await (await document.getPage(n)).getTextContent();
      const text = content.items.map((item) => ("str" in item ? item.str + (item.hasEOL ? "\n" : "") : "")).join("").trim();
      chars += text.length;
      if (chars > limits.maxUnpackedBytes) throw new Unreadable(`the PDF's text is longer than ${limits.maxUnpackedBytes} characters (limits.attachmentUnpackedBytes)`);
      pages.push(`[page ${n}]\n${text}`);
    }
    if (pages.every((p) => p.replace(/^\[page \d+\]\n/, "") === "")) throw new Unreadable("the PDF has no text layer (image-only: run OCR on it first)");
    return pages.join("\n\n");
  } catch (error) {
    if (error instanceof Unreadable) throw error;
    throw new Unreadable("not a readable PDF document");
  } finally {
    await document.destroy();
  }
}

const EXTRACTORS = { docx, html, pdf };

parentPort.on("message", async (message) => {
  let result;
  try {
    result = { text: await EXTRACTORS[message.kind](message.bytes, message.limits) };
  } catch (error) {
    if (error instanceof Unreadable) result = { unreadable: error.message };
    else if (error instanceof NotUtf8) result = { notUtf8: true };
    // Anything else a parser throws on a hostile file still means: this file cannot be read.
    else result = { unreadable: `the ${message.kind.toUpperCase()} document could not be read` };
  }
  parentPort.postMessage({ id: message.id, ...result });
});

// Loaded: the pool starts job clocks from here, not from the worker's start.
parentPort.postMessage({ id: 0, ready: true });
