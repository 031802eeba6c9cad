import "server-only";
import { createHash } from "node:crypto";
import { GenserveError } from "../errors";
import { newShareId, newShareToken } from "../ids";
import { listScope, mayRead } from "../keys/owner-access";
import type { Principal } from "../keys/api-keys";
import type { EvaluationRecord, RunRecord, ShareRecord, Store } from "../store/store-types";

const hashToken = (token: string) => createHash("sha256").update(token).digest("hex");

/** What a link shows, resolved: the link and the run or evaluation it points at. */
export type SharedTarget = { share: ShareRecord } & ({ kind: "run"; run: RunRecord } | { kind: "evaluation"; evaluation: EvaluationRecord });

/**
 * Read-only links to a run or an evaluation report that need no key. Only the token's hash is
 * stored; a link works while it is neither expired nor revoked and the key that made it is active.
 */
export class ShareLinks {
  constructor(
    private readonly store: Store,
    /** How many working links one key may hold. */
    private readonly perKey: number,
  ) {}

  /** A new link of the caller's to `targetId` (which the caller was checked to read); its token is in this answer only. */
  async create(caller: Principal, link: Pick<ShareRecord, "kind" | "targetId" | "hideFields" | "expiresAt">, now: Date): Promise<{ share: ShareRecord; token: string }> {
    const token = newShareToken();
    const share: ShareRecord = { id: newShareId(), tokenHash: hashToken(token), ...link, keyId: caller.keyId, revokedAt: null, createdAt: now.toISOString() };
    await this.store.shares.create(share, this.perKey);
    return { share, token };
  }

  /** The caller's links (an admin or viewer key's: every link of its project), newest first. */
  list(caller: Principal): Promise<ShareRecord[]> {
    return this.store.shares.list(listScope(caller));
  }

  /** Revokes a link (by the key that made it, or an admin); share_not_found otherwise. */
  async revoke(caller: Principal, id: string): Promise<void> {
    const share = await this.store.shares.get(id);
    if (!share || !(await mayRead(this.store, caller, share.keyId))) throw new GenserveError("share_not_found", { detail: `No share link "${id}" exists for this key.` });
    await this.store.shares.revoke(share.id, new Date().toISOString());
  }

  /**
   * What a token's link points at. Expired, revoked or unknown links are the same share_not_found,
   * and so is a link whose key was revoked: revoking a key takes back the links it made (checked on
   * every view, so no link outlives its key).
   */
  async resolve(token: string): Promise<SharedTarget> {
    const gone = () => new GenserveError("share_not_found", { detail: "This link does not exist, has expired or was revoked." });
    if (!/^[A-Za-z0-9_-]{43}$/.test(token)) throw gone();
    const share = await this.store.shares.byToken(hashToken(token));
    if (!share || share.revokedAt !== null || (share.expiresAt !== null && Date.parse(share.expiresAt) <= Date.now())) throw gone();
    const owner = await this.store.keys.get(share.keyId);
    if (!owner || owner.revokedAt !== null) throw gone();
    if (share.kind === "run") {
      const run = await this.store.runs.get(share.targetId);
      if (!run) throw gone();
      return { share, kind: "run", run };
    }
    const evaluation = await this.store.evaluations.get(share.targetId);
    if (!evaluation) throw gone();
    return { share, kind: "evaluation", evaluation };
  }
}
