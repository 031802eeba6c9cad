import "server-only";
import type Database from "better-sqlite3";
import type { GroupCommit } from "./group-commit";
import { driveSync, localChannels, SQLITE_DIALECT, type StoreRunner, type TxStatement } from "./runner";

/**
 * The store's runner on SQLite (see runner.ts): `$1` placeholders become `@p1` — every `$` followed
 * by a digit, even inside a string literal, so SQL text must not hold one (bind such a value) —, each statement is
 * prepared once, and a transaction runs synchronously — in a `BEGIN IMMEDIATE` of its own, or in
 * this turn's group commit (`grouped`), where it shares the commit with the other writes of the turn.
 * Announcements go to this process's listeners: one process owns the file.
 */
export function sqliteRunner(db: Database.Database, commits: GroupCommit): StoreRunner {
  const prepared = new Map<string, Database.Statement>();
  const statement = (sql: string) => {
    let found = prepared.get(sql);
    if (!found) prepared.set(sql, (found = db.prepare(sql.replace(/\$(\d+)/g, "@p$1"))));
    return found;
  };
  const named = (params: unknown[]) => {
    const bound: Record<string, unknown> = {};
    for (let i = 0; i < params.length; i++) bound[`p${i + 1}`] = params[i];
    return bound;
  };
  const channels = localChannels();
  const step = (s: TxStatement) => (s.rows ? statement(s.sql).all(named(s.params)) : statement(s.sql).run(named(s.params)).changes);
  return {
    dialect: SQLITE_DIALECT,
    all: async <R>(sql: string, params: unknown[]) => statement(sql).all(named(params)) as R[],
    run: async (sql, params) => statement(sql).run(named(params)).changes,
    async transact(work, options) {
      if (options?.grouped) return commits.write(() => driveSync(work(), step));
      return db.transaction(() => driveSync(work(), step)).immediate();
    },
    async write(sql, params, options) {
      const apply = () => statement(sql).run(named(params)).changes;
      const changed = options?.grouped ? await commits.write(apply) : apply();
      if (changed > 0 && options?.announce) channels.tell(options.announce);
      return changed;
    },
    listen: channels.listen,
  };
}
