import "server-only";
import { endpoint, handlerOf, type Endpoint, type Method } from "./endpoint";
import { endpoints as audit } from "./handlers/audit";
import { endpoints as catalog } from "./handlers/catalog";
import { endpoints as evaluations } from "./handlers/evaluations";
import { endpoints as generate } from "./handlers/generate";
import { endpoints as inbox } from "./handlers/inbox";
import { endpoints as keys } from "./handlers/keys";
import { endpoints as members } from "./handlers/members";
import { endpoints as models } from "./handlers/models";
import { endpoints as openai } from "./handlers/openai";
import { endpoints as projects } from "./handlers/projects";
import { endpoints as runs } from "./handlers/runs";
import { endpoints as session } from "./handlers/session";
import { endpoints as shares } from "./handlers/shares";
import { endpoints as threads } from "./handlers/threads";
import { endpoints as usage } from "./handlers/usage";
import { endpoints as workflowVersions } from "./handlers/workflow-versions";
import { buildOpenApiDocument } from "./openapi-document";
import { otherMethods, otherMethodsIn, type route } from "./route";

/**
 * The API's one route table: every operation of /api/v1 and the OpenAI-compatible /v1, declared once in the area files of
 * `handlers/` (method, path, auth, request and response shapes, words, handler). From it come the
 * route files Next.js needs (`app/api/v1/**\/route.ts`, each `routesFor(its path)`), the OpenAPI
 * document (`openApiDocument`), and with that the test that every response matches the document.
 */
export const ENDPOINTS: readonly Endpoint[] = [
  ...generate,
  ...runs,
  ...threads,
  ...catalog,
  ...workflowVersions,
  ...shares,
  ...keys,
  ...session,
  ...projects,
  ...members,
  ...usage,
  ...models,
  ...inbox,
  endpoint({
    method: "GET",
    path: "/api/v1/openapi.json",
    operationId: "getOpenApi",
    summary: "This document (OpenAPI 3.1)",
    auth: "none",
    responses: { "200": { description: "The document.", content: { "application/json": { schema: { type: "object" } } } } },
    errors: [],
    handler: async ({ runtime }) => new Response(openApiText(runtime.version), { headers: { "Content-Type": "application/json", "Cache-Control": "public, max-age=60" } }),
  }),
  ...evaluations,
  // OpenAI's paths and conventions (/v1, bearer key, its error shape): any OpenAI client runs workflows.
  ...openai,
  ...audit,
];

/** The OpenAPI document of the table. */
export function openApiDocument(version: string): Record<string, unknown> {
  return buildOpenApiDocument(version, ENDPOINTS);
}

const texts = new Map<string, string>();
/** The document as served, built once per version. */
function openApiText(version: string): string {
  let text = texts.get(version);
  if (text === undefined) texts.set(version, (text = JSON.stringify(openApiDocument(version))));
  return text;
}

type Handler = ReturnType<typeof route>;

/**
 * The handlers of one path of the table, for its route file: each method the table has, and a 405
 * problem (with `Allow`) for the others. `{name}` segments are the route folder's `[name]`.
 */
export function routesFor(path: string): Record<Method, Handler> {
  const entries = ENDPOINTS.filter((e) => e.path === path);
  if (entries.length === 0) throw new Error(`No endpoint of the route table has the path ${path}`);
  // Allow lists the methods in the table's order.
  const methods = entries.map((e) => e.method);
  const dialect = entries[0]!.dialect?.route;
  const handlers = dialect ? otherMethodsIn(dialect, methods) : otherMethods(...methods);
  for (const entry of entries) handlers[entry.method] = handlerOf(entry);
  return handlers;
}
