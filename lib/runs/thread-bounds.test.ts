import { afterEach, describe, expect, it } from "vitest";
import { isGenserveError } from "../errors";
import { IN_PROCESS_CONFIG, inProcess, type InProcess } from "../../test/helpers/in-process";
import { RecordingModel } from "../../test/helpers/mock-model";
import { BOUNDS } from "../store/contract-pages";

// Threads' bounds in the run service (issue 31): what a turn may add, and how much history a run reads.

const SCHEMA = { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] };
const VALID = '{"ok":true}';

let env: InProcess | undefined;
afterEach(async () => {
  await env?.close();
  env = undefined;
});
/** The service with these lines added to the configuration's limits. */
const start = async (model: RecordingModel, limits: string) => (env = await inProcess(model, `${IN_PROCESS_CONFIG}${limits}`));
const refusal = async (promise: Promise<unknown>) => {
  const error = await promise.then(() => null, (e: unknown) => e);
  if (!isGenserveError(error)) throw new Error(`expected a GenserveError, got ${String(error)}`);
  return error;
};

/** One turn of thread `threadId`, to its end. */
async function turn({ runs, hub, principal }: InProcess, threadId: string, input: string) {
  const { runId } = await runs.streamObject(principal, { input, workflowSlug: "extract", threadId, schema: SCHEMA });
  for await (const event of hub.follow(runId, 0, new AbortController().signal)) if (event.kind !== "item") expect(event.kind).toBe("done");
}

describe("threads in the run service", () => {
  it("reads a run's history newest first within limits.threadHistoryBytes, never the whole thread", async () => {
    const model = new RecordingModel().reply({ text: VALID });
    const e = await start(model, "  threadHistoryBytes: 1024\n");
    const at = new Date().toISOString();
    await e.store.threads.create({ id: "long", keyId: e.principal.keyId, workflowSlug: "extract", createdAt: at, updatedAt: at });
    // 20 messages of 300 bytes: 6,000 bytes, which the model's 8,192-token window would all take.
    const messages = Array.from({ length: 20 }, (_, i) => ({ role: i % 2 ? ("assistant" as const) : ("user" as const), content: String(i % 10).repeat(300), runId: null, createdAt: at }));
    await e.store.threads.append(e.principal.keyId, "long", messages, at);
    await turn(e, "long", "next question");
    // Within 1,024 bytes: the newest three messages, of which the newest whole exchange is sent.
    expect(model.calls[0]!.messages.map((m) => m.content)).toEqual(["8".repeat(300), "9".repeat(300), "next question"]);
  });

  it("refuses a turn the thread cannot take before any run exists: its bytes (409 at /threadId), its messages, an input larger than a thread (413 at /input)", async () => {
    const e = await start(new RecordingModel().reply({ text: VALID }, { text: VALID }, { text: VALID }), "  threadBytes: 2048\n  threadMessages: 6\n");
    const tooLarge = await refusal(e.runs.streamObject(e.principal, { input: "x".repeat(3_000), workflowSlug: "extract", threadId: "t", schema: SCHEMA }));
    expect([tooLarge.code, tooLarge.status, tooLarge.errors]).toEqual(["payload_too_large", 413, [{ path: "/input", message: expect.stringContaining("2048") }]]);

    await turn(e, "t", "a".repeat(800));
    await turn(e, "t", "b".repeat(800));
    expect(await e.store.threads.get(e.principal.keyId, "t")).toMatchObject({ messageCount: 4, bytes: 1_600 + 2 * VALID.length });
    const full = await refusal(e.runs.streamObject(e.principal, { input: "c".repeat(800), threadId: "t", schema: SCHEMA }));
    expect([full.code, full.status, full.errors]).toEqual(["thread_full", 409, [{ path: "/threadId", message: "is full" }]]);
    expect(full.detail).toMatch(/limits\.threadBytes/);
    // A shorter input still fits; then the thread has its 6 messages.
    await turn(e, "t", "ok");
    const count = await refusal(e.runs.streamObject(e.principal, { input: "d", threadId: "t", schema: SCHEMA }));
    expect([count.code, count.errors]).toEqual(["thread_full", [{ path: "/threadId", message: "is full" }]]);
    expect(count.detail).toMatch(/limits\.threadMessages/);
    // Refused turns stored no run.
    expect((await e.store.runs.list({ keyId: e.principal.keyId, limit: 10 }, BOUNDS)).runs).toHaveLength(3);
  });
});
