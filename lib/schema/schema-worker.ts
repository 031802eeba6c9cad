import path from "node:path";
import { Worker } from "node:worker_threads";
import { GenserveError } from "../errors";

/** ajv's error objects as the worker sends them. */
export interface RawAjvError {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
}

export type CompileReply = { ok: true } | { ok: false; meta?: RawAjvError[]; compile?: string };
export type ValidateReply = { valid: true } | { valid: false; errors: RawAjvError[] } | { missing: true };

/** The worker file, relative to the package root (it is plain JavaScript loaded by Node as is). */
export const SCHEMA_WORKER_FILE = path.join("lib", "schema", "validate-worker.mjs");

/**
 * A worker thread that compiles and runs JSON Schema validators (see validate-worker.mjs), so that
 * compiling a large caller schema never blocks the event loop. Started on first use; restarted
 * after a crash (its compiled validators are then compiled again on demand).
 */
export class SchemaWorker {
  private worker: Worker | null = null;
  private readonly pending = new Map<number, { resolve(value: unknown): void; reject(error: unknown): void }>();
  private nextId = 1;

  constructor(
    private readonly file: string,
    private readonly capacity: number,
  ) {}

  compile(key: string, draft: string, schema: Record<string, unknown>): Promise<CompileReply> {
    return this.call({ op: "compile", key, draft, schema }) as Promise<CompileReply>;
  }

  validate(key: string, value: unknown): Promise<ValidateReply> {
    return this.call({ op: "validate", key, value }) as Promise<ValidateReply>;
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    await worker?.terminate();
  }

  private call(message: Record<string, unknown>): Promise<unknown> {
    const worker = this.ensure();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ id, ...message });
    });
  }

  private ensure(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(this.file);
    worker.unref(); // never keeps a process alive on its own
    worker.postMessage({ id: 0, op: "configure", capacity: this.capacity });
    worker.on("message", (reply: { id: number; failure?: string } & Record<string, unknown>) => {
      const waiter = this.pending.get(reply.id);
      if (!waiter) return;
      this.pending.delete(reply.id);
      if (reply.failure !== undefined) waiter.reject(new GenserveError("internal", { detail: "Schema validation failed unexpectedly." }));
      else waiter.resolve(reply);
    });
    const fail = () => {
      if (this.worker === worker) this.worker = null;
      for (const [id, waiter] of this.pending) {
        this.pending.delete(id);
        waiter.reject(new GenserveError("internal", { detail: "The schema worker stopped; retry the request." }));
      }
    };
    worker.on("error", fail);
    worker.on("exit", fail);
    this.worker = worker;
    return worker;
  }
}
