import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { findRouteFiles } from "../cli/api-routes";
import { METHODS } from "./endpoint";
import { ENDPOINTS, routesFor } from "./table";

// Next.js needs a file per route; each is the table's handlers for its path and nothing else, so
// the table stays the one place an endpoint is declared.

const ROOT = path.resolve(import.meta.dirname, "../..");
const APP = path.join(ROOT, "app");
/** The 404s for paths that are no operation (a problem; OpenAI's error under /v1): not endpoints, so not in the table. */
const FALLBACKS = new Set(["/api/v1/*path", "/v1/*path"]);

/** A route file's pattern as an OpenAPI path: `:id` → `{id}`. */
const openApiPath = (segments: string[]) => `/${segments.map((s) => s.replace(/^:(\w+)$/, "{$1}")).join("/")}`;

const expectedText = (apiPath: string) => `import { routesFor } from "@/lib/http/table";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const { GET, POST, PUT, PATCH, DELETE } = routesFor("${apiPath}");
`;

// The OpenAI-compatible paths (/v1/…) are entries of the same table.
const files = findRouteFiles(APP).filter((f) => f.segments[0] === "api" || f.segments[0] === "v1");
const tablePaths = [...new Set(ENDPOINTS.map((e) => e.path))];

describe("the route files of /api/v1", () => {
  it("exist for every path of the table, and for nothing else but the 404 fallback", () => {
    const filePaths = files.map((f) => openApiPath(f.segments)).filter((p) => !FALLBACKS.has(p));
    expect(filePaths.sort()).toEqual([...tablePaths].sort());
  });

  it("are each the table's handlers for their own path", () => {
    for (const file of files) {
      const apiPath = openApiPath(file.segments);
      if (FALLBACKS.has(apiPath)) continue;
      expect(readFileSync(file.file, "utf8"), path.relative(ROOT, file.file)).toBe(expectedText(apiPath));
    }
  });

  it("export a handler for every method: the table's, and a 405 problem for the rest", async () => {
    for (const file of files) {
      const apiPath = openApiPath(file.segments);
      if (FALLBACKS.has(apiPath)) continue;
      const module = (await import(file.file)) as Record<string, unknown>;
      expect(Object.keys(module).sort(), apiPath).toEqual([...METHODS, "dynamic", "runtime"].sort());
      for (const method of METHODS) expect(typeof module[method], `${method} ${apiPath}`).toBe("function");
    }
  });

  it("answer the table's methods behind their auth, and the others with 405 and Allow in the table's order", async () => {
    // The handlers below never reach storage: a runtime with metrics is all they use.
    const RUNTIME = Symbol.for("genserve.runtime");
    const holder = globalThis as Record<symbol, unknown>;
    const previous = holder[RUNTIME];
    holder[RUNTIME] = { metrics: { httpRequest: () => {} } };
    try {
      for (const apiPath of tablePaths) {
        const entries = ENDPOINTS.filter((e) => e.path === apiPath);
        const handlers = routesFor(apiPath);
        const url = `http://genserve.test${apiPath.replace(/\{(\w+)\}/g, "x_$1")}`;
        const segment = { params: Promise.resolve({}) };
        for (const method of METHODS) {
          const entry = entries.find((e) => e.method === method);
          if (entry && entry.auth === "none") continue;
          const response = await handlers[method](new Request(url, { method }), segment);
          // The OpenAI-compatible paths answer OpenAI's error shape, with its code for a missing key.
          const body = (await response.json()) as { code?: string; error?: { code: string } };
          const code = entries[0]!.dialect ? body.error?.code : body.code;
          if (entry) {
            expect([response.status, code], `${method} ${apiPath} without a key`).toEqual([401, entry.dialect ? "invalid_api_key" : "unauthorized"]);
          } else {
            expect([response.status, code], `${method} ${apiPath}`).toEqual([405, "method_not_allowed"]);
            const allowed = entries.map((e) => e.method);
            expect(response.headers.get("allow")).toBe([...allowed, ...(allowed.includes("GET") ? ["HEAD"] : []), "OPTIONS"].join(", "));
          }
        }
      }
    } finally {
      holder[RUNTIME] = previous;
    }
    expect(() => routesFor("/api/v1/nope")).toThrow(/No endpoint/);
  });
});
