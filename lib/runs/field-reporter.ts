import "server-only";
import type { FieldError } from "../errors";

/**
 * One value of a streamed object that is complete: its JSON Pointer, the value, and whether it
 * holds against its own subschema — `null` when that cannot be decided from the value alone (its
 * subschema sits under `anyOf`, `if`, … or depends on its siblings). The whole object's validation
 * (the final `done`) still rules.
 */
export interface FieldEvent {
  pointer: string;
  value: unknown;
  valid: boolean | null;
}

/**
 * Turns one streamed attempt's closed parts, as the incremental parser closes them and the partial
 * validator judges them, into field events: each pointer once, in the order the parts close
 * (a leaf when its text ends, an object or array after everything in it). A pointer that closes a
 * second time (a duplicate key, `{"a":1,"a":2}`) would take back a value already reported complete:
 * it fails the attempt, as a part that can never validate does. Used only when a stream asked for
 * field events; the root (`""`) is reported by the attempt after the whole value is validated.
 */
export class FieldReporter {
  private readonly seen = new Set<string>();

  constructor(private readonly emit: (field: FieldEvent) => void) {}

  /**
   * A part closed; `problems` is the partial validator's verdict on it ([] holds, null undecidable).
   * Returns what dooms the attempt: the verdict's problems, or the duplicate.
   */
  closed(pointer: string, value: unknown, problems: FieldError[] | null): FieldError[] {
    if (this.seen.has(pointer)) return [{ path: pointer, message: "is a duplicate key; its first value was already reported complete" }];
    this.seen.add(pointer);
    this.emit({ pointer, value, valid: problems === null ? null : problems.length === 0 });
    return problems ?? [];
  }
}
