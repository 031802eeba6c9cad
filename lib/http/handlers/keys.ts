import "server-only";
import { createKeyRequest, updateKeyRequest } from "../../api/requests";
import { apiKeyDetailSchema, apiKeySchema, createdKeySchema, keyListSchema, meSchema } from "../../api/responses";
import { limitsPatch, limitsView, NO_LIMITS } from "../../domain/key-limits";
import type { ApiKeyRecord } from "../../store/store-types";
import { changesBetween } from "../../audit/audit-log";
import { audit } from "../audit-origin";
import { endpoint } from "../endpoint";
import { reply } from "../problem";

/** Keys are managed by admin keys; a key sees itself through /api/v1/me. */
const ADMIN = { admin: "Only admin keys may manage keys; GET /api/v1/me shows this key." };

/** A key as the API shows it: never the hash or the signing secret. */
function keyView(record: ApiKeyRecord) {
  return {
    id: record.id,
    name: record.name,
    prefix: record.prefix,
    admin: record.admin,
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
    auth: "key",
    responses: { "200": { description: "The key.", body: meSchema } },
    errors: ["unauthorized"],
    /** The calling key, its limits (with the configured default rate) and how much of each is used; what it holds of its storage quotas. */
    handler: async ({ principal, runtime }) => {
      const caller = await principal();
      const { limits, quotas, held } = await runtime.services.keys.standing(caller.keyId, caller.limits);
      const caps = runtime.config.limits;
      return reply(meSchema, {
        keyId: caller.keyId,
        name: caller.name,
        admin: caller.admin,
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
    summary: "Every API key (admin keys); never the keys themselves",
    auth: ADMIN,
    responses: { "200": { description: "Keys.", body: keyListSchema } },
    errors: ["unauthorized", "forbidden"],
    handler: async ({ runtime }) => reply(keyListSchema, { keys: (await runtime.services.keys.list()).map(keyView) }),
  }),
  endpoint({
    method: "POST",
    path: "/api/v1/keys",
    operationId: "createKey",
    summary: "Create a key with optional limits and budgets (admin keys); the key is in this response only",
    auth: ADMIN,
    request: { body: createKeyRequest, required: true },
    responses: { "201": { description: "The key, with the key itself and its signing secret.", body: createdKeySchema } },
    errors: ["validation_failed", "unauthorized", "forbidden"],
    handler: async (ctx) => {
      const { runtime, body } = ctx;
      const input = await body(createKeyRequest);
      const { record, key } = await runtime.services.keys.create({
        name: input.name,
        admin: input.admin ?? false,
        limits: { ...NO_LIMITS, ...limitsPatch(input.limits ?? {}) },
      });
      await audit(ctx, "key.create", { kind: "key", id: record.id }, changesBetween(null, { name: record.name, admin: record.admin, limits: limitsView(record.limits) }));
      return reply(createdKeySchema, { ...keyView(record), key, webhookSecret: record.webhookSecret ?? "" }, { status: 201, headers: { Location: `/api/v1/keys/${record.id}` } });
    },
  }),
  endpoint({
    method: "GET",
    path: "/api/v1/keys/{id}",
    operationId: "getKey",
    summary: "One key with its quotas as they stand (admin keys)",
    auth: ADMIN,
    responses: { "200": { description: "The key.", body: apiKeyDetailSchema } },
    errors: ["unauthorized", "forbidden", "not_found"],
    handler: async ({ runtime, params }) => {
      const { record, quotas } = await runtime.services.keys.get(params.id);
      return reply(apiKeyDetailSchema, { ...keyView(record), quotas });
    },
  }),
  endpoint({
    method: "PATCH",
    path: "/api/v1/keys/{id}",
    operationId: "updateKey",
    summary: "Rename a key or change its limits (admin keys); null removes a limit. Runs already admitted keep what they reserved.",
    auth: ADMIN,
    request: { body: updateKeyRequest, required: true },
    responses: { "200": { description: "The key.", body: apiKeySchema } },
    errors: ["validation_failed", "unauthorized", "forbidden", "not_found"],
    /** Limits apply to runs admitted from now on; runs in progress keep what they reserved. */
    handler: async (ctx) => {
      const { runtime, params, body } = ctx;
      const input = await body(updateKeyRequest);
      const before = (await runtime.services.keys.get(params.id)).record;
      const after = await runtime.services.keys.update(params.id, { name: input.name, limits: limitsPatch(input.limits ?? {}) });
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
    summary: "Revoke a key (admin keys): it is refused at once. The last active admin key cannot be revoked.",
    auth: ADMIN,
    responses: { "204": { description: "Revoked." } },
    errors: ["unauthorized", "forbidden", "not_found", "conflict"],
    /** Revokes the key: it is refused at once. The last active admin key cannot be revoked (nobody could manage keys). */
    handler: async (ctx) => {
      const { runtime, params } = ctx;
      await runtime.services.keys.revoke(params.id);
      const { record } = await runtime.services.keys.get(params.id);
      await audit(ctx, "key.revoke", { kind: "key", id: record.id }, changesBetween({ name: record.name, revokedAt: null }, { name: record.name, revokedAt: record.revokedAt }));
      return new Response(null, { status: 204 });
    },
  }),
];
