/**
 * `streamObject`'s result: the run's events turned into typed partial objects as the JSON text
 * arrives (the project's incremental parser: work proportional to each delta, not to the text so
 * far), plus the raw deltas, `restart` events and the final, validated object. Browser-safe.
 */
import { PartialJsonParser } from "../json/partial";
import { GenserveValidationError } from "./api-error";
import type { RunMetadata } from "./operations";
import type { RunStreamEvent } from "./run-stream";
import { parseWithSchema, type DeepPartial, type SchemaInput } from "./schema-input";

/** One part of an object stream. */
export type ObjectStreamPart<T> =
  /** The object so far (a fresh copy each time: safe to keep), after `delta` arrived. */
  | { type: "partial"; object: DeepPartial<T>; delta: string; id: number }
  /** The model's attempt was discarded and a retry began: forget the partial object. */
  | { type: "restart"; attempt: number; id: number }
  /** The run succeeded. */
  | { type: "done"; object: T; metadata: RunMetadata; runId: string };

/** The final result of a stream. */
export interface ObjectStreamResult<T> {
  object: T;
  metadata: RunMetadata;
  runId: string;
}

/**
 * A streamed object run: iterate it for its parts, or await `result()` for the end.
 *
 * @example
 * ```ts
 * const stream = await client.streamObject({ workflow: "extract-invoice", input, schema: Invoice });
 * for await (const part of stream) {
 *   if (part.type === "partial") render(part.object); // DeepPartial<Invoice>
 *   if (part.type === "restart") clear();
 * }
 * const { object, metadata } = await stream.result(); // Invoice, with the run's cost and tokens
 * ```
 */
export class ObjectStream<T> implements AsyncIterable<ObjectStreamPart<T>> {
  private iterating = false;
  private readonly settled: Promise<ObjectStreamResult<T>>;
  private resolve!: (result: ObjectStreamResult<T>) => void;
  private reject!: (error: unknown) => void;

  constructor(
    /** The run's id, known as soon as the response began. */
    readonly runId: string,
    private readonly source: AsyncGenerator<RunStreamEvent>,
    private readonly schema: SchemaInput | undefined,
  ) {
    this.settled = new Promise((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    // Awaited by result() only: an unobserved failure is the iterator's to report.
    this.settled.catch(() => undefined);
  }

  [Symbol.asyncIterator](): AsyncIterator<ObjectStreamPart<T>> {
    if (this.iterating) throw new Error("An object stream can be iterated once.");
    this.iterating = true;
    return this.parts();
  }

  /** Only the partial objects, in order. */
  async *partialObjects(): AsyncGenerator<DeepPartial<T>> {
    for await (const part of this) {
      if (part.type === "partial") yield part.object;
    }
  }

  /** The final object and metadata; reads the rest of the stream itself when nobody iterates it. */
  async result(): Promise<ObjectStreamResult<T>> {
    if (!this.iterating) {
      for await (const _part of this) {
        // Drained for the result.
      }
    }
    return this.settled;
  }

  private async *parts(): AsyncGenerator<ObjectStreamPart<T>> {
    let parser = new PartialJsonParser();
    try {
      for await (const event of this.source) {
        if (event.type === "item") {
          parser.push(event.text);
          yield { type: "partial", object: parser.snapshot().value as DeepPartial<T>, delta: event.text, id: event.id };
        } else if (event.type === "restart") {
          parser = new PartialJsonParser();
          yield { type: "restart", attempt: event.attempt, id: event.id };
        } else {
          const parsed = await parseWithSchema<T>(this.schema, event.object);
          if ("issues" in parsed) {
            throw new GenserveValidationError(422, { code: "schema_mismatch", detail: "The run's object does not satisfy the schema given to the client.", errors: parsed.issues, runId: event.runId });
          }
          const result = { object: parsed.value, metadata: event.metadata, runId: event.runId };
          this.resolve(result);
          yield { type: "done", ...result };
        }
      }
    } catch (error) {
      this.reject(error);
      throw error;
    } finally {
      this.reject(new Error("The stream was left before its end."));
    }
  }
}
