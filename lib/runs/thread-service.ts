import "server-only";
import { GenserveError } from "../errors";
import type { Store, ThreadInfo, ThreadPageMessage, ThreadPageQuery, ThreadRecord } from "../store/store-types";

const notFound = (id: string) => new GenserveError("thread_not_found", { detail: `No thread "${id}" exists for this key.` });

/** Conversation threads as the API manages them: each belongs to the key that created it. */
export class ThreadService {
  constructor(
    private readonly store: Store,
    /** How many threads one key may hold. */
    private readonly perKey: number,
  ) {}

  /** Creates the thread; conflict when the key already has one with its id. */
  async create(thread: ThreadRecord): Promise<void> {
    if (!(await this.store.threads.create(thread, this.perKey))) {
      throw new GenserveError("conflict", { detail: `This key already has a thread "${thread.id}".`, errors: [{ path: "/id", message: "already exists" }] });
    }
  }

  /** The key's thread, else thread_not_found. */
  async get(keyId: string, id: string): Promise<ThreadInfo> {
    const thread = await this.store.threads.get(keyId, id);
    if (!thread) throw notFound(id);
    return thread;
  }

  page(thread: ThreadRecord, query: ThreadPageQuery): Promise<{ messages: ThreadPageMessage[]; more: boolean }> {
    return this.store.threads.page(thread.keyId, thread.id, query);
  }

  async delete(keyId: string, id: string): Promise<void> {
    if (!(await this.store.threads.delete(keyId, id))) throw notFound(id);
  }
}
