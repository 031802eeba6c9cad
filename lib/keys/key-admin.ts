import "server-only";
import type { KeyLimits, Quota } from "../domain/key-limits";
import { DEFAULT_PROJECT_ID, type Role } from "../domain/roles";
import { GenserveError, validationError, type QuotaResource } from "../errors";
import type { ApiKeyRecord, Store } from "../store/store-types";
import { createKey, type CreatedKey, type Principal } from "./api-keys";
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

  /** The keys of the caller's project (a key never sees another project's keys). */
  list(caller: Principal): Promise<ApiKeyRecord[]> {
    return this.store.keys.list(caller.projectId);
  }

  /** One key of the caller's project with its quotas as they stand; not_found for any other. */
  async get(caller: Principal, id: string): Promise<{ record: ApiKeyRecord; quotas: Quota[] }> {
    const record = await this.inProject(caller, id);
    return { record, quotas: await keyQuotas(this.store, record.id, effectiveLimits(record.limits, this.defaults), new Date()) };
  }

  /**
   * A key in the caller's project, or in the project named `project` — which only admin keys of the
   * default project (the install's own) may name. `admin: true` is role admin, for callers from
   * before roles; naming both differently is refused.
   */
  async create(caller: Principal, options: { name: string; role?: Role; admin?: boolean; project?: string; limits: KeyLimits }): Promise<CreatedKey> {
    if (options.role !== undefined && options.admin !== undefined && options.admin !== (options.role === "admin")) {
      throw validationError([{ path: "/admin", message: `contradicts role "${options.role}" (admin: true is role admin); send role alone` }]);
    }
    let projectId = caller.projectId;
    if (options.project !== undefined) {
      const project = await this.store.projects.bySlug(options.project);
      if (!project || (project.id !== caller.projectId && caller.projectId !== DEFAULT_PROJECT_ID)) {
        throw new GenserveError("not_found", { detail: `No project "${options.project}" exists for this key.`, errors: [{ path: "/project", message: "unknown project" }] });
      }
      projectId = project.id;
    }
    return createKey(this.store, { name: options.name, role: options.role, admin: options.admin, projectId, limits: options.limits });
  }

  /** Renames a key of the caller's project or changes its limits (for runs admitted from now on); the key as it is now. */
  async update(caller: Principal, id: string, patch: { name?: string; limits?: Partial<KeyLimits> }): Promise<ApiKeyRecord> {
    await this.inProject(caller, id);
    if (!(await this.store.keys.update(id, patch))) throw notFound(id);
    return (await this.store.keys.get(id))!;
  }

  /** Revokes a key of the caller's project: it is refused at once. A project's last active admin key cannot be revoked (nobody could manage its keys). */
  async revoke(caller: Principal, id: string): Promise<void> {
    const keys = await this.store.keys.list(caller.projectId);
    const target = keys.find((k) => k.id === id && k.revokedAt === null);
    if (!target) throw notFound(id);
    if (target.role === "admin" && keys.filter((k) => k.role === "admin" && k.revokedAt === null).length === 1) {
      throw new GenserveError("conflict", { detail: "This is the project's last active admin key; create another admin key before revoking it." });
    }
    await this.store.keys.revoke(id, new Date().toISOString());
  }

  private async inProject(caller: Principal, id: string): Promise<ApiKeyRecord> {
    const record = await this.store.keys.get(id);
    if (!record || record.projectId !== caller.projectId) throw notFound(id);
    return record;
  }
}

const notFound = (id: string) => new GenserveError("not_found", { detail: `No key with id "${id}" exists.` });
