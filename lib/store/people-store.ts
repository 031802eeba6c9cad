import "server-only";
import { KEY_INSERT, keyValues, openKey } from "./keys-store";
import type { SecretBox } from "./secret-box";
import type { PeopleStore, PendingLogin, SessionRecord, UserRecord } from "./people-types";
import type { KeyRow } from "./rows";
import { all, run, type StoreRunner } from "./runner";

interface UserRow {
  id: string;
  email: string;
  name: string | null;
  password_hash: string | null;
  created_at: string;
  disabled_at: string | null;
}

interface SessionRow {
  id: string;
  user_id: string | null;
  key_id: string;
  csrf_token: string;
  created_at: string;
  last_seen_at: string;
  idle_expires_at: string;
  expires_at: string;
  revoked_at: string | null;
  ip: string | null;
  user_agent: string | null;
}

interface LoginRow {
  id: string;
  verifier: string;
  nonce: string;
  return_to: string;
  created_at: string;
  expires_at: string;
}

const toUser = (r: UserRow): UserRecord => ({ id: r.id, email: r.email, name: r.name, passwordHash: r.password_hash, createdAt: r.created_at, disabledAt: r.disabled_at });

const toSession = (r: SessionRow): SessionRecord => ({
  id: r.id,
  userId: r.user_id,
  keyId: r.key_id,
  csrfToken: r.csrf_token,
  createdAt: r.created_at,
  lastSeenAt: r.last_seen_at,
  idleExpiresAt: r.idle_expires_at,
  expiresAt: r.expires_at,
  revokedAt: r.revoked_at,
  ip: r.ip,
  userAgent: r.user_agent,
});

const toLogin = (r: LoginRow): PendingLogin => ({ id: r.id, verifier: r.verifier, nonce: r.nonce, returnTo: r.return_to, createdAt: r.created_at, expiresAt: r.expires_at });

/** People, their identities, sign-in tokens and sessions, written once for both backends (see runner.ts). */
export function peopleStore(db: StoreRunner, box: SecretBox): PeopleStore {
  const toKey = (row: KeyRow) => openKey(row, box);
  const oneUser = async (sql: string, params: unknown[]) => {
    const [row] = await db.all<UserRow>(sql, params);
    return row ? toUser(row) : null;
  };
  return {
    async createUser(user, key) {
      return db.transact(function* () {
        const taken = yield* all<{ id: string }>("SELECT id FROM users WHERE email = $1", [user.email]);
        if (taken.length > 0) return false;
        yield* run("INSERT INTO users (id, email, name, password_hash, created_at, disabled_at) VALUES ($1, $2, $3, $4, $5, $6)", [
          user.id,
          user.email,
          user.name,
          user.passwordHash,
          user.createdAt,
          user.disabledAt,
        ]);
        yield* run(KEY_INSERT, keyValues(key, box));
        yield* run("UPDATE api_keys SET user_id = $1 WHERE id = $2", [user.id, key.id]);
        return true;
      }, { lock: "users" });
    },
    user: (id) => oneUser("SELECT * FROM users WHERE id = $1", [id]),
    userByEmail: (email) => oneUser("SELECT * FROM users WHERE email = $1", [email]),
    userByIdentity: (issuer, subject) =>
      oneUser("SELECT u.* FROM users u JOIN user_identities i ON i.user_id = u.id WHERE i.issuer = $1 AND i.subject = $2", [issuer, subject]),
    async linkIdentity(issuer, subject, userId, at) {
      await db.run("INSERT INTO user_identities (issuer, subject, user_id, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT (issuer, subject) DO NOTHING", [issuer, subject, userId, at]);
    },
    async setPassword(userId, hash) {
      return (await db.run("UPDATE users SET password_hash = $1 WHERE id = $2", [hash, userId])) > 0;
    },
    async disableUser(userId, at) {
      return db.transact(function* () {
        const changed = yield* run("UPDATE users SET disabled_at = COALESCE(disabled_at, $1) WHERE id = $2", [at, userId]);
        yield* run("UPDATE sessions SET revoked_at = $1 WHERE user_id = $2 AND revoked_at IS NULL", [at, userId]);
        return changed > 0;
      });
    },
    async personalKey(userId) {
      const [row] = await db.all<KeyRow>("SELECT * FROM api_keys WHERE user_id = $1 AND revoked_at IS NULL ORDER BY created_at DESC, id DESC", [userId]);
      return row ? toKey(row) : null;
    },
    async setRole(userId, role) {
      // The default project's membership only (migration 25 named it): a role in another project is its admins' to give.
      await db.run("UPDATE api_keys SET role = $1, admin = $2 WHERE user_id = $3 AND project_id = 'prj_default'", [role, role === "admin" ? 1 : 0, userId]);
    },

    async insertSignInToken(t) {
      await db.run("INSERT INTO sign_in_tokens (hash, user_id, purpose, created_at, expires_at, used_at) VALUES ($1, $2, $3, $4, $5, NULL)", [t.hash, t.userId, t.purpose, t.createdAt, t.expiresAt]);
    },
    async useSignInToken(hash, purpose, at) {
      // One statement: of two replicas redeeming the same link at once, one gets the person.
      const [row] = await db.all<{ user_id: string }>(
        "UPDATE sign_in_tokens SET used_at = $1 WHERE hash = $2 AND purpose = $3 AND used_at IS NULL AND expires_at > $1 RETURNING user_id",
        [at, hash, purpose],
      );
      return row?.user_id ?? null;
    },

    async insertSession(s) {
      await db.run(
        `INSERT INTO sessions (id, user_id, key_id, csrf_token, created_at, last_seen_at, idle_expires_at, expires_at, revoked_at, ip, user_agent)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
        [s.id, s.userId, s.keyId, s.csrfToken, s.createdAt, s.lastSeenAt, s.idleExpiresAt, s.expiresAt, s.revokedAt, s.ip, s.userAgent],
      );
    },
    async session(id) {
      const [row] = await db.all<SessionRow>("SELECT * FROM sessions WHERE id = $1", [id]);
      return row ? toSession(row) : null;
    },
    async touchSession(id, at, idleExpiresAt) {
      await db.run(
        "UPDATE sessions SET last_seen_at = $1, idle_expires_at = CASE WHEN $2 < expires_at THEN $2 ELSE expires_at END WHERE id = $3 AND revoked_at IS NULL",
        [at, idleExpiresAt, id],
      );
    },
    async setSessionKey(id, keyId) {
      return (await db.run("UPDATE sessions SET key_id = $1 WHERE id = $2 AND revoked_at IS NULL", [keyId, id])) > 0;
    },
    async revokeSession(id, at) {
      return (await db.run("UPDATE sessions SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL", [at, id])) > 0;
    },
    async revokeSessions(of, at) {
      if ("userId" in of) return db.run("UPDATE sessions SET revoked_at = $1 WHERE user_id = $2 AND revoked_at IS NULL", [at, of.userId]);
      return db.run("UPDATE sessions SET revoked_at = $1 WHERE key_id = $2 AND user_id IS NULL AND revoked_at IS NULL", [at, of.keyId]);
    },

    async savePendingLogin(l, max) {
      return db.transact(function* () {
        // Sign-ins abandoned at the provider expire; past `max` under way at once, no more start.
        yield* run("DELETE FROM sign_in_logins WHERE expires_at < $1", [l.createdAt]);
        const [row] = yield* all<{ n: number | string }>("SELECT COUNT(*) AS n FROM sign_in_logins", []);
        if (Number(row?.n ?? 0) >= max) return false;
        yield* run("INSERT INTO sign_in_logins (id, verifier, nonce, return_to, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6)", [
          l.id,
          l.verifier,
          l.nonce,
          l.returnTo,
          l.createdAt,
          l.expiresAt,
        ]);
        return true;
      }, { lock: "sign_in_logins" });
    },
    async takePendingLogin(id, at) {
      const [row] = await db.all<LoginRow>("DELETE FROM sign_in_logins WHERE id = $1 RETURNING *", [id]);
      return row && row.expires_at > at ? toLogin(row) : null;
    },

    async countAttempt(subject, windowStart) {
      // One statement: parallel attempts each get a different count, so no more than the limit pass.
      const [row] = await db.all<{ failures: number | string }>(
        `INSERT INTO sign_in_failures (subject, window_start, failures) VALUES ($1, $2, 1)
         ON CONFLICT (subject, window_start) DO UPDATE SET failures = sign_in_failures.failures + 1 RETURNING failures`,
        [subject, windowStart],
      );
      return Number(row?.failures ?? 0);
    },
    async uncountAttempt(subject, windowStart, all) {
      if (all) await db.run("DELETE FROM sign_in_failures WHERE subject = $1 AND window_start = $2", [subject, windowStart]);
      else await db.run("UPDATE sign_in_failures SET failures = failures - 1 WHERE subject = $1 AND window_start = $2 AND failures > 0", [subject, windowStart]);
    },
    async attempts(subject, windowStart) {
      const [row] = await db.all<{ failures: number | string }>("SELECT failures FROM sign_in_failures WHERE subject = $1 AND window_start = $2", [subject, windowStart]);
      return Number(row?.failures ?? 0);
    },

    async sweep(before) {
      await db.transact(function* () {
        yield* run("DELETE FROM sessions WHERE expires_at < $1 OR idle_expires_at < $1 OR revoked_at < $1", [before]);
        yield* run("DELETE FROM sign_in_tokens WHERE expires_at < $1", [before]);
        yield* run("DELETE FROM sign_in_logins WHERE expires_at < $1", [before]);
        yield* run("DELETE FROM sign_in_failures WHERE window_start < $1", [before]);
      });
    },
  };
}
