import "server-only";
import { z } from "zod";
import * as lifecycle from "../api/lifecycle-shapes";
import * as openai from "../api/openai-shapes";
import { apiShapes } from "../api/shape-registry";
import * as requests from "../api/requests";
import * as responses from "../api/responses";
import * as suites from "../api/suite-shapes";
import { ERROR_CODES, type ErrorCode } from "../errors";
import { pathParams, type Endpoint } from "./endpoint";

const ref = (id: string) => ({ $ref: `#/components/schemas/${id}` });

/** The component a named shape is (`named()` put it in `apiShapes`); a shape left unnamed cannot be documented. */
function shapeRef(shape: z.ZodType, where: string): { $ref: string } {
  const id = apiShapes.get(shape)?.id;
  if (!id) throw new Error(`${where}: the shape is not named (register it with named() in lib/api)`);
  return ref(id);
}

/**
 * Components generated from the same zod schemas that validate requests and build responses: every
 * named shape is in `apiShapes` (lib/api/shape-registry.ts: this copy of the modules' own, never zod's global
 * registry, which every bundled copy of them would fill again).
 */
function components(): Record<string, unknown> {
  // Every module that names shapes, loaded: the components do not depend on which endpoints refer to what.
  void [requests, responses, suites, lifecycle, openai];
  const out = z.toJSONSchema(apiShapes, { target: "draft-2020-12", io: "input", uri: (id) => `#/components/schemas/${id}`, unrepresentable: "any" });
  const schemas = out.schemas as Record<string, Record<string, unknown>>;
  for (const schema of Object.values(schemas)) {
    delete schema.$schema;
    delete schema.$id;
  }
  // By name: the registry's order is the order its modules happened to load in, which differs
  // between copies (a page that loaded lib/api/suites first lists its shapes first).
  return Object.fromEntries(Object.keys(schemas).sort().map((id) => [id, schemas[id]]));
}

/** Each status the codes answer with, as problem+json; its description lists the codes. */
const problemResponses = (codes: readonly ErrorCode[]) =>
  Object.fromEntries(
    [...new Set(codes.map((c) => ERROR_CODES[c].status))].map((status) => [
      String(status),
      {
        description: codes.filter((c) => ERROR_CODES[c].status === status).join(", "),
        content: { "application/problem+json": { schema: ref("Problem") } },
      },
    ]),
  );

/** One endpoint of the table as an OpenAPI operation. */
function operation(entry: Endpoint): Record<string, unknown> {
  const where = `${entry.method} ${entry.path}`;
  const parameters = [...pathParams(entry.path).map((name) => ({ name, in: "path", required: true, schema: { type: "string" } })), ...(entry.parameters ?? [])];
  const responseEntries = Object.entries(entry.responses).map(([status, spec]) => {
    const content = spec.body ? { "application/json": { schema: shapeRef(spec.body, `${where} ${status}`) } } : spec.content;
    return [status, { description: spec.description, ...(spec.headers && { headers: spec.headers }), ...(content && { content }) }];
  });
  const request = entry.request;
  // The least role in the key's project the operation needs, for programs (x-genserve-role) and people (the description).
  const role = entry.auth === "none" ? null : entry.auth.role;
  const roleWords = role === null ? "No key needed." : `Needs a key of role \`${role}\` or above in its project.`;
  return {
    operationId: entry.operationId,
    summary: entry.summary,
    description: entry.description ? `${entry.description}\n\n${roleWords}` : roleWords,
    ...(role !== null && { "x-genserve-role": role }),
    ...(entry.dialect && { tags: [entry.dialect.tag], security: [{ [entry.dialect.security]: [] }] }),
    ...(entry.auth === "none" && { security: [] }),
    ...(parameters.length > 0 && { parameters }),
    ...(request && {
      requestBody: {
        required: request.required,
        content: { "application/json": { schema: request.body instanceof z.ZodType ? shapeRef(request.body, `${where} request`) : request.body } },
      },
    }),
    responses: { ...Object.fromEntries(responseEntries), ...problemResponses(entry.errors) },
  };
}

/** The OpenAPI 3.1 document of `endpoints` (the route table): its paths in the table's order. */
export function buildOpenApiDocument(version: string, endpoints: readonly Endpoint[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const entry of endpoints) (paths[entry.path] ??= {})[entry.method.toLowerCase()] = operation(entry);
  return {
    openapi: "3.1.0",
    info: {
      title: "genserve API",
      version,
      description:
        "Structured objects, streams and text from named workflows. Every operation needs the `Api-Key` header. Errors are RFC 9457 problem details with a stable `code`. The operations tagged \"OpenAI compatible\" (under /v1) follow OpenAI's conventions instead: `Authorization: Bearer <key>`, errors as `{error: {message, type, param, code}}`.",
    },
    servers: [{ url: "/" }],
    security: [{ apiKey: [] }],
    paths,
    components: {
      securitySchemes: {
        apiKey: { type: "apiKey", in: "header", name: "Api-Key" },
        bearerKey: { type: "http", scheme: "bearer", description: "A genserve API key as `Authorization: Bearer <key>` (the OpenAI-compatible operations, tag \"OpenAI compatible\")." },
      },
      schemas: components(),
    },
    "x-error-codes": Object.fromEntries(Object.entries(ERROR_CODES).map(([code, spec]) => [code, { status: spec.status, title: spec.title, retryable: spec.retryable }])),
  };
}
