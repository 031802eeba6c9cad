import "server-only";
import { createKeyRequest, updateKeyRequest } from "../../api/requests";
import { apiKeyDetailSchema, apiKeySchema, createdKeySchema, keyListSchema, meSchema } from "../../api/responses";
import { limitsPatch, limitsView, NO_LIMITS } from "../../domain/key-limits";
import type { ApiKeyRecord } from "../../store/store-types";
import { changesBetween } from "../../audit/audit-log";
import { audit } from "../audit-origin";
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
    handler: async (ctx) => {
      const { runtime, body, principal } = ctx;
      const input = await body(createKeyRequest);
      const { record, key } = await runtime.services.keys.create(await principal(), {
        name: input.name,
        role: input.role,
        admin: input.admin,
        project: input.project,
        limits: { ...NO_LIMITS, ...limitsPatch(input.limits ?? {}) },
      });
      await audit(ctx, "key.create", { kind: "key", id: record.id }, changesBetween(null, { name: record.name, role: record.role, project: record.projectId, limits: limitsView(record.limits) }));
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
    handler: async (ctx) => {
      const { runtime, params, body, principal } = ctx;
      const caller = await principal();
      const input = await body(updateKeyRequest);
      const before = (await runtime.services.keys.get(caller, params.id)).record;
      const after = await runtime.services.keys.update(caller, params.id, { name: input.name, limits: limitsPatch(input.limits ?? {}) });
      const subject = { kind: "key", id: after.id };
      if (before.name !== after.name) await audit(ctx, "key.rename", subject, changesBetween({ name: before.name }, { name: after.name }));
      const limits = changesBetween(limitsView(before.limits), limitsView(after.limits));
      if (Object.keys(limits).length > 0) await audit(ctx, "key.limits", subject, limits);
      return reply(apiKeySchema, keyView(after));
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
    handler: async (ctx) => {
      const { runtime, params, principal } = ctx;
      const caller = await principal();
      await runtime.services.keys.revoke(caller, params.id);
      const { record } = await runtime.services.keys.get(caller, params.id);
      await audit(ctx, "key.revoke", { kind: "key", id: record.id }, changesBetween({ name: record.name, revokedAt: null }, { name: record.name, revokedAt: record.revokedAt }));
      return new Response(null, { status: 204 });
    },
  }),
];
