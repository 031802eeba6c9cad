import { afterEach, describe, expect, it } from "vitest";
import { testConfig } from "../helpers/config";
import { startFakeUpstream, type FakeUpstream } from "../helpers/fake-upstream";
import { startGenserve, tempDir, writeConfig, type GenserveServer } from "../helpers/genserve";

// The API reference and the OpenAPI document after other pages, on a fresh server each time: Next.js
// loads lib/api once per server layer, and a document built from a registry every copy fills
// (zod's global one) failed with `Duplicate schema id "Callback"` once any page had been rendered
// before it — only a restart helped (issue 32, 4.1).

const PAGES = ["/", "/workflows", "/workflows/extract-invoice", "/contexts", "/runs", "/runs/run_missing", "/suites", "/keys", "/usage", "/s/no-such-token"];

/** Orders that put every page first once, and reversed, and the two pages the issue names. */
const ORDERS: string[][] = [["/suites"], PAGES, [...PAGES].reverse(), ["/runs", "/workflows/extract-invoice", "/", "/suites"]];

/** The document as the first fresh server served it: every other order must serve the same bytes. */
let reference: string | undefined;
let upstream: FakeUpstream | undefined;
let server: GenserveServer | undefined;
afterEach(async () => {
  await server?.stop();
  await upstream?.close();
  server = undefined;
  upstream = undefined;
});

async function fresh(): Promise<GenserveServer> {
  upstream = await startFakeUpstream();
  const dir = tempDir();
  server = await startGenserve({ configFile: writeConfig(dir, testConfig(upstream.url)), dataDir: `${dir}/data` });
  return server;
}

describe("the docs and the OpenAPI document after other pages on a fresh server", () => {
  for (const order of ORDERS) {
    it(`after ${order.join(", ")}`, async () => {
      const { url } = await fresh();
      for (const page of order) {
        const response = await fetch(`${url}${page}`, { headers: { accept: "text/html" } });
        await response.text();
        expect(response.status, page).toBeLessThan(500);
      }
      // Twice each: a first success must not be a cached answer hiding a failing second build.
      for (let i = 0; i < 2; i++) {
        const openapi = await fetch(`${url}/api/v1/openapi.json`);
        const text = await openapi.text();
        expect(openapi.status, text.slice(0, 300)).toBe(200);
        reference ??= text;
        expect(text === reference, "the same bytes whatever was loaded before").toBe(true);
        const doc = JSON.parse(text) as { components: { schemas: Record<string, unknown> } };
        expect(Object.keys(doc.components.schemas)).toEqual(expect.arrayContaining(["Callback", "Attachment", "GenerateObjectRequest", "RunDetail"]));
        const docs = await fetch(`${url}/docs`, { headers: { accept: "text/html" } });
        const html = await docs.text();
        expect(docs.status).toBe(200);
        expect(html).toContain("/api/v1/generate/object");
        expect(html).not.toMatch(/Duplicate schema id|Minified React error/);
        // Every inline script carries this response's CSP nonce (a static render had none for the layout's theme script).
        const nonce = /'nonce-([^']+)'/.exec(docs.headers.get("content-security-policy") ?? "")?.[1];
        expect(nonce).toBeTruthy();
        const inline = [...html.matchAll(/<script(?![^>]*\bsrc=)([^>]*)>/g)].map((m) => m[1]!);
        expect(inline.length).toBeGreaterThan(0);
        expect(inline.filter((attributes) => !attributes.includes(`nonce="${nonce}"`))).toEqual([]);
      }
      // The RSC payload a client-side navigation to /docs fetches.
      const rsc = await fetch(`${url}/docs`, { headers: { rsc: "1" } });
      expect(rsc.status).toBe(200);
      expect(await rsc.text()).toContain("generateObject");
    });
  }
});
