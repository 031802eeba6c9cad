import "server-only";
import { createKeyRequest, updateKeyRequest } from "../../api/requests";
import { apiKeyDetailSchema, apiKeySchema, createdKeySchema, keyListSchema, meSchema } from "../../api/responses";
import { limitsPatch, limitsView, NO_LIMITS } from "../../domain/key-limits";
import type { ApiKeyRecord } from "../../store/store-types";
import { ADMIN, endpoint, VIEWER } from "../endpoint";
import { reply } from "../problem";

/** Keys are managed by admin keys; a key sees itself through /api/v1/me. */
const KEYS = ADMIN("Only admin keys may manage keys; GET /api/v1/me shows this key.");

/** A key as the API shows it: never the hash or the signing secret. */
function keyView(record: ApiKeyRecord) {
  return {
    id: record.id,
    name: record.name,
    prefix: record.prefix,
    admin: record.role === "admin",
    role: record.role,
    projectId: record.projectId,
    createdAt: record.createdAt,
    lastUsedAt: record.lastUsedAt,
    revokedAt: record.revokedAt,
    limits: limitsView(record.limits),
  };
}

export const endpoints = [
  endpoint({
    method: "GET",
    path: "/api/v1/me",
    operationId: "me",
    summary: "The calling key, its limits and how much of each is used now",
    auth: VIEWER,
    responses: { "200": { description: "The key.", body: meSchema } },
    errors: ["unauthorized"],
    /** The calling key, its limits (with the configured default rate) and how much of each is used; what it holds of its storage quotas. */
    handler: async ({ principal, runtime }) => {
      const caller = await principal();
      const [{ limits, quotas, held }, project] = await Promise.all([runtime.services.keys.standing(caller.keyId, caller.limits), runtime.services.projects.own(caller)]);
      const caps = runtime.config.limits;
      return reply(meSchema, {
        keyId: caller.keyId,
        name: caller.name,
        admin: caller.admin,
        role: caller.role,
        project,
        limits: limitsView(limits),
        quotas,
        storage: {
          inboxes: { used: held.inboxes, limit: caps.inboxesPerKey },
          shares: { used: held.shares, limit: caps.sharesPerKey },
          threads: { used: held.threads, limit: caps.threadsPerKey },
          suites: { used: held.suites, limit: caps.suitesPerKey },
        },
      });
    },
  }),
  endpoint({
    method: "GET",
    path: "/api/v1/keys",
    operationId: "listKeys",
    summary: "Every API key of this key's project (admin keys); never the keys themselves",
    auth: KEYS,
    responses: { "200": { description: "Keys.", body: keyListSchema } },
    errors: ["unauthorized", "forbidden"],
    handler: async ({ runtime, principal }) => reply(keyListSchema, { keys: (await runtime.services.keys.list(await principal())).map(keyView) }),
  }),
  endpoint({
    method: "POST",
    path: "/api/v1/keys",
    operationId: "createKey",
    summary: "Create a key with a role (viewer, editor, admin), optional limits and budgets (admin keys), in this key's project; the key is in this response only",
    auth: KEYS,
    request: { body: createKeyRequest, required: true },
    responses: { "201": { description: "The key, with the key itself and its signing secret.", body: createdKeySchema } },
    errors: ["validation_failed", "unauthorized", "forbidden", "not_found"],
    handler: async ({ runtime, body, principal }) => {
      const input = await body(createKeyRequest);
      const { record, key } = await runtime.services.keys.create(await principal(), {
        name: input.name,
        role: input.role,
        admin: input.admin,
        project: input.project,
        limits: { ...NO_LIMITS, ...limitsPatch(input.limits ?? {}) },
      });
      return reply(createdKeySchema, { ...keyView(record), key, webhookSecret: record.webhookSecret ?? "" }, { status: 201, headers: { Location: `/api/v1/keys/${record.id}` } });
    },
  }),
  endpoint({
    method: "GET",
    path: "/api/v1/keys/{id}",
    operationId: "getKey",
    summary: "One key with its quotas as they stand (admin keys)",
    auth: KEYS,
    responses: { "200": { description: "The key.", body: apiKeyDetailSchema } },
    errors: ["unauthorized", "forbidden", "not_found"],
    handler: async ({ runtime, params, principal }) => {
      const { record, quotas } = await runtime.services.keys.get(await principal(), params.id);
      return reply(apiKeyDetailSchema, { ...keyView(record), quotas });
    },
  }),
  endpoint({
    method: "PATCH",
    path: "/api/v1/keys/{id}",
    operationId: "updateKey",
    summary: "Rename a key or change its limits (admin keys); null removes a limit. Runs already admitted keep what they reserved.",
    auth: KEYS,
    request: { body: updateKeyRequest, required: true },
    responses: { "200": { description: "The key.", body: apiKeySchema } },
    errors: ["validation_failed", "unauthorized", "forbidden", "not_found"],
    /** Limits apply to runs admitted from now on; runs in progress keep what they reserved. */
    handler: async ({ runtime, params, body, principal }) => {
      const input = await body(updateKeyRequest);
      return reply(apiKeySchema, keyView(await runtime.services.keys.update(await principal(), params.id, { name: input.name, limits: limitsPatch(input.limits ?? {}) })));
    },
  }),
  endpoint({
    method: "DELETE",
    path: "/api/v1/keys/{id}",
    operationId: "revokeKey",
    summary: "Revoke a key (admin keys): it is refused at once. A project's last active admin key cannot be revoked.",
    auth: KEYS,
    responses: { "204": { description: "Revoked." } },
    errors: ["unauthorized", "forbidden", "not_found", "conflict"],
    /** Revokes the key: it is refused at once. The last active admin key cannot be revoked (nobody could manage keys). */
    handler: async ({ runtime, params, principal }) => {
      await runtime.services.keys.revoke(await principal(), params.id);
      return new Response(null, { status: 204 });
    },
  }),
];
