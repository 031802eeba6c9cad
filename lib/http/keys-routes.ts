import "server-only";
import { apiKeyDetailSchema, apiKeySchema, createdKeySchema, keyListSchema, meSchema } from "../api/responses";
import { createKeyRequest, updateKeyRequest } from "../api/requests";
import { limitsPatch, limitsView, NO_LIMITS } from "../domain/limits";
import { GenserveError } from "../errors";
import { createKey, type Principal } from "../keys/keys";
import { effectiveLimits, keyQuotas } from "../keys/limits";
import type { ApiKeyRecord } from "../store/types";
import { reply } from "./problem";
import { route } from "./route";

/** Keys are managed by admin keys; a key sees itself through /api/v1/me. */
function requireAdmin(principal: Principal): void {
  if (!principal.admin) throw new GenserveError("forbidden", { detail: "Only admin keys may manage keys; GET /api/v1/me shows this key." });
}

const notFound = (id: string) => new GenserveError("not_found", { detail: `No key with id "${id}" exists.` });

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

/** GET /api/v1/me: the calling key, its limits (with the configured default rate) and how much of each is used; what it holds of its storage quotas. */
export const me = route(async ({ principal, runtime }) => {
  const caller = await principal();
  const limits = effectiveLimits(caller.limits, runtime.config.limits);
  const now = new Date();
  const held = await runtime.store.quotas.usage(caller.keyId, now.toISOString());
  const caps = runtime.config.limits;
  return reply(meSchema, {
    keyId: caller.keyId,
    name: caller.name,
    admin: caller.admin,
    limits: limitsView(limits),
    quotas: await keyQuotas(runtime.store, caller.keyId, limits, now),
    storage: {
      inboxes: { used: held.inboxes, limit: caps.inboxesPerKey },
      shares: { used: held.shares, limit: caps.sharesPerKey },
      threads: { used: held.threads, limit: caps.threadsPerKey },
      suites: { used: held.suites, limit: caps.suitesPerKey },
    },
  });
});

/** GET and POST /api/v1/keys (admin keys): every key; a new key, shown once. */
export const keyCollection = {
  GET: route(async ({ principal, runtime }) => {
    requireAdmin(await principal());
    return reply(keyListSchema, { keys: (await runtime.store.keys.list()).map(keyView) });
  }),
  POST: route(async ({ principal, runtime, body }) => {
    requireAdmin(await principal());
    const input = await body(createKeyRequest);
    const { record, key } = await createKey(runtime.store, {
      name: input.name,
      admin: input.admin ?? false,
      limits: { ...NO_LIMITS, ...limitsPatch(input.limits ?? {}) },
    });
    return reply(createdKeySchema, { ...keyView(record), key, webhookSecret: record.webhookSecret ?? "" }, { status: 201, headers: { Location: `/api/v1/keys/${record.id}` } });
  }),
};

/** GET, PATCH and DELETE /api/v1/keys/{id} (admin keys): one key with its quotas; its name or limits; revocation. */
export const keyEntry = {
  GET: route<{ id: string }>(async ({ principal, runtime, params }) => {
    requireAdmin(await principal());
    const record = await runtime.store.keys.get(params.id);
    if (!record) throw notFound(params.id);
    const quotas = await keyQuotas(runtime.store, record.id, effectiveLimits(record.limits, runtime.config.limits), new Date());
    return reply(apiKeyDetailSchema, { ...keyView(record), quotas });
  }),
  /** Limits apply to runs admitted from now on; runs in progress keep what they reserved. */
  PATCH: route<{ id: string }>(async ({ principal, runtime, params, body }) => {
    requireAdmin(await principal());
    const input = await body(updateKeyRequest);
    if (!(await runtime.store.keys.update(params.id, { name: input.name, limits: limitsPatch(input.limits ?? {}) }))) throw notFound(params.id);
    return reply(apiKeySchema, keyView((await runtime.store.keys.get(params.id))!));
  }),
  /** Revokes the key: it is refused at once. The last active admin key cannot be revoked (nobody could manage keys). */
  DELETE: route<{ id: string }>(async ({ principal, runtime, params }) => {
    requireAdmin(await principal());
    const keys = await runtime.store.keys.list();
    const target = keys.find((k) => k.id === params.id && k.revokedAt === null);
    if (!target) throw notFound(params.id);
    if (target.admin && keys.filter((k) => k.admin && k.revokedAt === null).length === 1) {
      throw new GenserveError("conflict", { detail: "This is the last active admin key; create another admin key before revoking it." });
    }
    await runtime.store.keys.revoke(params.id, new Date().toISOString());
    return new Response(null, { status: 204 });
  }),
};
