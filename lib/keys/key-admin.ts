import "server-only";
import type { KeyLimits, Quota } from "../domain/key-limits";
import { GenserveError, type QuotaResource } from "../errors";
import type { ApiKeyRecord, Store } from "../store/store-types";
import { createKey, type CreatedKey } from "./api-keys";
import { effectiveLimits, keyQuotas } from "./limit-meters";

/**
 * Keys as the API manages them (admin keys) and shows them (a key itself, through /me): what the
 * handlers ask of storage about keys, in one place.
 */
export class KeyAdmin {
  constructor(
    private readonly store: Store,
    /** The configured default rate, which a key without its own rpm limit gets. */
    private readonly defaults: { runsPerMinute: number },
  ) {}

  /** A key's limits as they apply (the default rate filled in), how much of each is used now, and what it holds of its storage quotas. */
  async standing(keyId: string, limits: KeyLimits, now = new Date()): Promise<{ limits: KeyLimits; quotas: Quota[]; held: Record<QuotaResource, number> }> {
    const effective = effectiveLimits(limits, this.defaults);
    const held = await this.store.quotas.usage(keyId, now.toISOString());
    return { limits: effective, quotas: await keyQuotas(this.store, keyId, effective, now), held };
  }

  list(): Promise<ApiKeyRecord[]> {
    return this.store.keys.list();
  }

  /** One key with its quotas as they stand; not_found when there is none. */
  async get(id: string): Promise<{ record: ApiKeyRecord; quotas: Quota[] }> {
    const record = await this.store.keys.get(id);
    if (!record) throw notFound(id);
    return { record, quotas: await keyQuotas(this.store, record.id, effectiveLimits(record.limits, this.defaults), new Date()) };
  }

  create(options: { name: string; admin: boolean; limits: KeyLimits }): Promise<CreatedKey> {
    return createKey(this.store, options);
  }

  /** Renames a key or changes its limits (for runs admitted from now on); the key as it is now. */
  async update(id: string, patch: { name?: string; limits?: Partial<KeyLimits> }): Promise<ApiKeyRecord> {
    if (!(await this.store.keys.update(id, patch))) throw notFound(id);
    return (await this.store.keys.get(id))!;
  }

  /** Revokes a key: it is refused at once. The last active admin key cannot be revoked (nobody could manage keys). */
  async revoke(id: string): Promise<void> {
    const keys = await this.store.keys.list();
    const target = keys.find((k) => k.id === id && k.revokedAt === null);
    if (!target) throw notFound(id);
    if (target.admin && keys.filter((k) => k.admin && k.revokedAt === null).length === 1) {
      throw new GenserveError("conflict", { detail: "This is the last active admin key; create another admin key before revoking it." });
    }
    await this.store.keys.revoke(id, new Date().toISOString());
  }
}

const notFound = (id: string) => new GenserveError("not_found", { detail: `No key with id "${id}" exists.` });
