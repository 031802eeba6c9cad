import "server-only";
import { cappedWrite } from "./quotas";
import { THREAD_INSERT } from "./rows";
import { run, type StoreRunner } from "./runner";
import { threadReads } from "./thread-reads";
import type { Store } from "./store-types";

/** Threads, written once for both backends; their reads are thread-reads.ts. */
export function threadsStore(db: StoreRunner): Store["threads"] {
  return {
    async create(thread, limit) {
      const cap = limit === undefined ? undefined : { resource: "threads" as const, keyId: thread.keyId, limit, at: thread.createdAt, except: thread.id };
      return (await cappedWrite(db, cap, { sql: THREAD_INSERT, params: [thread.keyId, thread.id, thread.workflowSlug, thread.createdAt, thread.updatedAt] })) > 0;
    },
    ...threadReads(db),
    async append(keyId, id, messages, at) {
      // Every turn of a conversation writes here: on SQLite it shares the turn's group commit.
      await db.transact(
        function* () {
          for (const m of messages) {
            yield* run("INSERT INTO thread_messages (key_id, thread_id, run_id, role, content, created_at, bytes) VALUES ($1, $2, $3, $4, $5, $6, $7)", [
              keyId,
              id,
              m.runId,
              m.role,
              m.content,
              m.createdAt,
              Buffer.byteLength(m.content, "utf8"),
            ]);
          }
          yield* run("UPDATE threads SET updated_at = $1 WHERE key_id = $2 AND id = $3", [at, keyId, id]);
        },
        { grouped: true },
      );
    },
    async delete(keyId, id) {
      return (await db.run("DELETE FROM threads WHERE key_id = $1 AND id = $2", [keyId, id])) > 0;
    },
  };
}
