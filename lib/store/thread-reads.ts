import "server-only";
import type { SqlRunner } from "./runner";
import type { ThreadInfo, ThreadPageMessage, ThreadPageQuery } from "./pages";
import type { ThreadMessage } from "./store-types";

/**
 * Reading threads, written once for both backends. A thread can hold far more than any response
 * or prompt should (issue 31: 300 turns of 1 MiB read whole, 14 times at once, exhausted the
 * heap), so no read takes the whole of it: sizes come from the index over (seq, bytes), a page
 * and a run's history are chosen by those sizes first, and only then are their messages read.
 */

/**
 * After an import from an export made before thread messages and inbox deliveries carried their
 * size (migrations 18 and 20): measure them, in UTF-8 bytes as writes do. Run once, after the rows.
 */
export const MEASURE_IMPORTED = [
  "UPDATE thread_messages SET bytes = octet_length(content) WHERE bytes = 0 AND content <> ''",
  "UPDATE inbox_events SET bytes = octet_length(body) + octet_length(headers) WHERE bytes = 0",
] as const;

interface ThreadRow {
  key_id: string;
  id: string;
  workflow_slug: string;
  created_at: string;
  updated_at: string;
  message_count: number | string;
  bytes: number | string;
}

interface MessageRow {
  seq: number;
  role: "user" | "assistant";
  content: string;
  bytes: number;
  run_id: string | null;
  created_at: string;
}

const encoder = new TextEncoder();

/** The longest start of `text` within `maxBytes` of UTF-8, never splitting a character. */
export function cutToBytes(text: string, maxBytes: number): string {
  if (text.length * 3 <= maxBytes) return text;
  const { read } = encoder.encodeInto(text, new Uint8Array(maxBytes));
  return text.slice(0, read);
}

export function threadReads(sql: SqlRunner) {
  return {
    async get(keyId: string, id: string): Promise<ThreadInfo | null> {
      const [row] = await sql.all<ThreadRow>(
        `SELECT t.key_id, t.id, t.workflow_slug, t.created_at, t.updated_at, s.message_count, s.bytes
         FROM threads t,
              (SELECT COUNT(*) AS message_count, COALESCE(SUM(bytes), 0) AS bytes FROM thread_messages WHERE key_id = $1 AND thread_id = $2) s
         WHERE t.key_id = $1 AND t.id = $2`,
        [keyId, id],
      );
      if (!row) return null;
      return { keyId: row.key_id, id: row.id, workflowSlug: row.workflow_slug, createdAt: row.created_at, updatedAt: row.updated_at, messageCount: Number(row.message_count), bytes: Number(row.bytes) };
    },

    async page(keyId: string, id: string, query: ThreadPageQuery): Promise<{ messages: ThreadPageMessage[]; more: boolean }> {
      const asc = query.order === "asc";
      const after = query.from === undefined ? "" : `AND seq ${asc ? ">" : "<"} $4`;
      const sizes = await sql.all<{ seq: number; bytes: number }>(
        `SELECT seq, bytes FROM thread_messages WHERE key_id = $1 AND thread_id = $2 ${after} ORDER BY seq ${asc ? "ASC" : "DESC"} LIMIT $3`,
        [keyId, id, query.limit + 1, ...(query.from === undefined ? [] : [query.from])],
      );
      // As many messages as fit the page's bytes; the first always, cut to them when larger.
      let taken = 0;
      let total = 0;
      for (const { bytes } of sizes.slice(0, query.limit)) {
        if (taken > 0 && total + Number(bytes) > query.maxBytes) break;
        total += Number(bytes);
        taken++;
      }
      if (taken === 0) return { messages: [], more: false };
      const first = sizes[0]!.seq;
      const last = sizes[taken - 1]!.seq;
      // A character is at least one byte: `maxBytes` characters hold any message within the page.
      const rows = await sql.all<MessageRow>(
        `SELECT seq, role, substr(content, 1, $5) AS content, bytes, run_id, created_at FROM thread_messages
         WHERE key_id = $1 AND thread_id = $2 AND seq >= $3 AND seq <= $4 ORDER BY seq ${asc ? "ASC" : "DESC"}`,
        [keyId, id, Math.min(first, last), Math.max(first, last), query.maxBytes],
      );
      const messages = rows.map((m) => {
        const truncated = Number(m.bytes) > query.maxBytes;
        return {
          seq: Number(m.seq),
          role: m.role,
          content: truncated ? cutToBytes(m.content, query.maxBytes) : m.content,
          bytes: Number(m.bytes),
          truncated,
          runId: m.run_id,
          createdAt: m.created_at,
        };
      });
      return { messages, more: sizes.length > taken };
    },

    async history(keyId: string, id: string, maxBytes: number): Promise<ThreadMessage[]> {
      // The oldest message of the newest run of messages within maxBytes, summed over the index alone.
      const [edge] = await sql.all<{ seq: number | null }>(
        `SELECT MIN(seq) AS seq FROM (
           SELECT seq, SUM(bytes) OVER (ORDER BY seq DESC ROWS UNBOUNDED PRECEDING) AS total
           FROM thread_messages WHERE key_id = $1 AND thread_id = $2
         ) newest WHERE total <= $3`,
        [keyId, id, maxBytes],
      );
      if (edge?.seq === null || edge?.seq === undefined) return [];
      const rows = await sql.all<MessageRow>(
        "SELECT role, content, run_id, created_at FROM thread_messages WHERE key_id = $1 AND thread_id = $2 AND seq >= $3 ORDER BY seq",
        [keyId, id, Number(edge.seq)],
      );
      return rows.map((m) => ({ role: m.role, content: m.content, runId: m.run_id, createdAt: m.created_at }));
    },
  };
}
