import "server-only";
import type { Role } from "../domain/roles";
import { KEY_INSERT, keyValues, openKey } from "./keys-store";
import type { InviteRecord, MemberRecord, MembersStore, MembershipRecord } from "./people-types";
import type { KeyRow } from "./rows";
import { all, run, type StoreRunner } from "./runner";
import type { SecretBox } from "./secret-box";

interface MemberRow {
  user_id: string;
  email: string;
  name: string | null;
  role: Role;
  key_id: string;
  since: string;
  last_used_at: string | null;
  last_seen_at: string | null;
}

interface InviteRow {
  id: string;
  token_hash: string;
  project_id: string;
  email: string;
  role: Role;
  created_by: string | null;
  created_at: string;
  expires_at: string;
  accepted_at: string | null;
  revoked_at: string | null;
}

const toMember = (r: MemberRow): MemberRecord => {
  const seen = [r.last_used_at, r.last_seen_at].filter((at): at is string => at !== null).sort();
  return { userId: r.user_id, email: r.email, name: r.name, role: r.role, keyId: r.key_id, since: r.since, lastActiveAt: seen.at(-1) ?? null };
};

const toInvite = (r: InviteRow): InviteRecord => ({
  id: r.id,
  tokenHash: r.token_hash,
  projectId: r.project_id,
  email: r.email,
  role: r.role,
  createdBy: r.created_by,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  acceptedAt: r.accepted_at,
  revokedAt: r.revoked_at,
});

/** A person's live personal key in a project. */
const KEY_IN = "SELECT * FROM api_keys WHERE project_id = $1 AND user_id = $2 AND revoked_at IS NULL ORDER BY created_at, id";
/** Membership changes of one project take turns (two admins demoting each other at once: one of them stays admin). */
const lockOf = (projectId: string) => `members:${projectId}`;

/** The people of projects (a membership is a live personal key) and invitations, for both backends (see runner.ts). */
export function membersStore(db: StoreRunner, box: SecretBox): MembersStore {
  return {
    async list(projectId) {
      const rows = await db.all<MemberRow>(
        `SELECT u.id AS user_id, u.email, u.name, k.role, k.id AS key_id, k.created_at AS since, k.last_used_at,
                (SELECT MAX(s.last_seen_at) FROM sessions s WHERE s.key_id = k.id) AS last_seen_at
           FROM api_keys k JOIN users u ON u.id = k.user_id
          WHERE k.project_id = $1 AND k.revoked_at IS NULL AND u.disabled_at IS NULL
          ORDER BY u.email, k.created_at, k.id`,
        [projectId],
      );
      // One row a person (a person holds one live personal key a project; the oldest if ever more).
      const seen = new Set<string>();
      return rows.filter((r) => !seen.has(r.user_id) && seen.add(r.user_id)).map(toMember);
    },
    async keyIn(projectId, userId) {
      const [row] = await db.all<KeyRow>(KEY_IN, [projectId, userId]);
      return row ? openKey(row, box) : null;
    },
    async memberships(userId) {
      const rows = await db.all<{ key_id: string; project_id: string; slug: string; name: string; role: Role }>(
        `SELECT k.id AS key_id, p.id AS project_id, p.slug, p.name, k.role
           FROM api_keys k JOIN projects p ON p.id = k.project_id
          WHERE k.user_id = $1 AND k.revoked_at IS NULL
          ORDER BY p.name, p.slug, k.created_at, k.id`,
        [userId],
      );
      const seen = new Set<string>();
      return rows
        .filter((r) => !seen.has(r.project_id) && seen.add(r.project_id))
        .map((r): MembershipRecord => ({ keyId: r.key_id, projectId: r.project_id, slug: r.slug, name: r.name, role: r.role }));
    },
    async join(userId, key) {
      const row = await db.transact(function* () {
        const [existing] = yield* all<KeyRow>(KEY_IN + db.dialect.forUpdate, [key.projectId, userId]);
        if (existing) return existing;
        yield* run(KEY_INSERT, keyValues(key, box));
        yield* run("UPDATE api_keys SET user_id = $1 WHERE id = $2", [userId, key.id]);
        const [made] = yield* all<KeyRow>("SELECT * FROM api_keys WHERE id = $1", [key.id]);
        return made!;
      }, { lock: lockOf(key.projectId) });
      return openKey(row, box);
    },
    async change(projectId, userId, role, at) {
      return db.transact(function* () {
        const [key] = yield* all<KeyRow>(KEY_IN + db.dialect.forUpdate, [projectId, userId]);
        if (!key) return "not_member" as const;
        if (key.role === "admin" && role !== "admin") {
          const [row] = yield* all<{ n: number | string }>(
            "SELECT COUNT(DISTINCT user_id) AS n FROM api_keys WHERE project_id = $1 AND user_id IS NOT NULL AND revoked_at IS NULL AND role = 'admin'",
            [projectId],
          );
          if (Number(row?.n ?? 0) <= 1) return "last_admin" as const;
        }
        if (role === null) yield* run("UPDATE api_keys SET revoked_at = $1 WHERE project_id = $2 AND user_id = $3 AND revoked_at IS NULL", [at, projectId, userId]);
        else yield* run("UPDATE api_keys SET role = $1, admin = $2 WHERE project_id = $3 AND user_id = $4 AND revoked_at IS NULL", [role, role === "admin" ? 1 : 0, projectId, userId]);
        return "ok" as const;
      }, { lock: lockOf(projectId) });
    },

    async insertInvite(i) {
      await db.run(
        `INSERT INTO invites (id, token_hash, project_id, email, role, created_by, created_at, expires_at, accepted_at, revoked_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
        [i.id, i.tokenHash, i.projectId, i.email, i.role, i.createdBy, i.createdAt, i.expiresAt, i.acceptedAt, i.revokedAt],
      );
    },
    async pendingInvites(projectId, at) {
      const rows = await db.all<InviteRow>(
        "SELECT * FROM invites WHERE project_id = $1 AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > $2 ORDER BY created_at DESC, id DESC",
        [projectId, at],
      );
      return rows.map(toInvite);
    },
    async revokeInvite(projectId, id, at) {
      return (await db.run("UPDATE invites SET revoked_at = $1 WHERE id = $2 AND project_id = $3 AND accepted_at IS NULL AND revoked_at IS NULL", [at, id, projectId])) > 0;
    },
    async acceptInvite(tokenHash, at) {
      const [row] = await db.all<InviteRow>(
        "UPDATE invites SET accepted_at = $1 WHERE token_hash = $2 AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > $1 RETURNING *",
        [at, tokenHash],
      );
      return row ? toInvite(row) : null;
    },
    async inviteByToken(tokenHash) {
      const [row] = await db.all<InviteRow>("SELECT * FROM invites WHERE token_hash = $1", [tokenHash]);
      return row ? toInvite(row) : null;
    },
  };
}
