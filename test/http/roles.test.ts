import { beforeAll, describe, expect, it } from "vitest";
import { createKey } from "../helpers/genserve";
import { useGenserve } from "../helpers/suite";

// Every operation of the route table (as the OpenAPI document, generated from it, lists them with
// their `x-genserve-role`) called without a key and with a key of each role of one project: 401
// without a key, 403 `forbidden` below the operation's role, never 403 at or above it (a body the
// operation refuses, or a resource that does not exist, answers 4xx otherwise). A route whose
// declared role is not enforced fails here.

const ctx = useGenserve();
const ROLES = ["viewer", "editor", "admin"] as const;
type Role = (typeof ROLES)[number];
const keys = {} as Record<Role, string>;
let operations: { method: string; path: string; operationId: string; role: Role | null; bearer: boolean }[] = [];

beforeAll(async () => {
  for (const role of ROLES) keys[role] = (await createKey(`matrix-${role}`, { dataDir: ctx.server.dataDir, role })).key;
  const doc = (await (await fetch(`${ctx.server.url}/api/v1/openapi.json`)).json()) as { paths: Record<string, Record<string, { operationId: string; security?: unknown[]; "x-genserve-role"?: Role }>> };
  operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({ method: method.toUpperCase(), path, operationId: op.operationId, role: op.security?.length === 0 ? null : (op["x-genserve-role"] ?? ("missing" as Role)), bearer: JSON.stringify(op.security ?? []).includes("bearerKey") })),
  );
});

/** A concrete URL of an operation: path parameters are names nothing holds (the production label is left to its own test). */
const urlOf = (path: string) => path.replace("{label}", "staging").replace(/\{(\w+)\}/g, (_, name: string) => `nothing-${name}`);

/** The OpenAI-compatible operations (security `bearerKey`) take the key as a bearer token and answer OpenAI's error shape. */
async function call(method: string, path: string, key: string | null, bearer = false) {
  const withBody = ["POST", "PUT", "PATCH"].includes(method);
  const credential: Record<string, string> = key === null ? {} : bearer ? { authorization: `Bearer ${key}` } : { "api-key": key };
  const response = await fetch(`${ctx.server.url}${urlOf(path)}`, {
    method,
    headers: { ...credential, ...(withBody ? { "content-type": "application/json" } : {}) },
    body: withBody ? "{}" : undefined,
  });
  const text = await response.text();
  let code: string | undefined;
  try {
    const body = JSON.parse(text) as { code?: string; error?: { code?: string } };
    code = bearer ? body.error?.code : body.code;
  } catch {
    code = undefined;
  }
  // A stream that opened (it cannot for a run that does not exist, but never hang on one).
  return { status: response.status, code, text: text.slice(0, 200) };
}

describe("the route × role matrix", () => {
  it("declares a role on every operation that needs a key", () => {
    expect(operations.length).toBeGreaterThan(50);
    expect(operations.filter((o) => o.role !== null && !ROLES.includes(o.role)).map((o) => `${o.method} ${o.path}`)).toEqual([]);
  });

  it("answers 401 without a key, 403 forbidden below the declared role, and never 403 at or above it", async () => {
    const wrong: string[] = [];
    for (const op of operations) {
      if (op.role === null) continue;
      const where = `${op.method} ${op.path} (needs ${op.role})`;
      const anonymous = await call(op.method, op.path, null, op.bearer);
      if (anonymous.status !== 401) wrong.push(`${where} without a key: ${anonymous.status} ${anonymous.text}`);
      for (const role of ROLES) {
        const answer = await call(op.method, op.path, keys[role], op.bearer);
        const below = ROLES.indexOf(role) < ROLES.indexOf(op.role);
        if (below && (answer.status !== 403 || answer.code !== "forbidden")) wrong.push(`${where} as ${role}: ${answer.status} ${answer.text}, expected 403 forbidden`);
        if (!below && answer.status === 403) wrong.push(`${where} as ${role}: 403 ${answer.text}`);
        if (!below && answer.status === 401) wrong.push(`${where} as ${role}: 401 ${answer.text}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it("lets editors move labels but the production label only admins", async () => {
    const put = (path: string, key: string, body: unknown) =>
      fetch(`${ctx.server.url}${path}`, { method: "PUT", headers: { "api-key": key, "content-type": "application/json" }, body: JSON.stringify(body) });
    expect((await put("/api/v1/workflows/matrix-flow", keys.editor, { model: "fast", instructions: "one" })).status).toBe(201);
    expect((await put("/api/v1/workflows/matrix-flow/labels/staging", keys.editor, { version: 1 })).status).toBe(200);
    const refused = await put("/api/v1/workflows/matrix-flow/labels/production", keys.editor, { version: 1 });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ code: "forbidden", errors: [{ path: "label" }] });
    const promote = await fetch(`${ctx.server.url}/api/v1/workflows/matrix-flow/labels/production`, { method: "POST", headers: { "api-key": keys.editor, "content-type": "application/json" }, body: JSON.stringify({ version: "1" }) });
    expect(promote.status).toBe(403);
    const removed = await fetch(`${ctx.server.url}/api/v1/workflows/matrix-flow/labels/production`, { method: "DELETE", headers: { "api-key": keys.editor } });
    expect(removed.status).toBe(403);
    expect((await put("/api/v1/workflows/matrix-flow/labels/production", keys.admin, { version: 1 })).status).toBe(200);
    // A viewer moves nothing, and reads everything of its project.
    expect((await put("/api/v1/workflows/matrix-flow/labels/staging", keys.viewer, { version: 1 })).status).toBe(403);
    const labels = await fetch(`${ctx.server.url}/api/v1/workflows/matrix-flow/labels`, { headers: { "api-key": keys.viewer } });
    expect((await labels.json()).labels.map((l: { label: string }) => l.label).sort()).toEqual(["production", "staging"]);
  });
});
