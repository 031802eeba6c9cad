import "server-only";
/**
 * Providers whose structured output must be an object at the top level (OpenAI, Anthropic) get a
 * top-level array or string schema wrapped as `{"value": ...}`; the wrapper is removed again before
 * anything reaches genserve's validation or the caller.
 */

export const ENVELOPE_KEY = "value";

export function wrapSchema(schema: Record<string, unknown>): Record<string, unknown> {
  const { $defs, definitions, $schema, ...inner } = schema;
  return {
    ...($schema !== undefined && { $schema }),
    type: "object",
    properties: { [ENVELOPE_KEY]: inner },
    required: [ENVELOPE_KEY],
    additionalProperties: false,
    // Local references ("#/$defs/x") resolve against the root, so definitions move up with it.
    ...($defs !== undefined && { $defs }),
    ...(definitions !== undefined && { definitions }),
  };
}

/** The inner JSON text of a complete wrapped document; the text unchanged when it is not one. */
export function unwrapText(text: string): string {
  try {
    const parsed = JSON.parse(text) as unknown;
    if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed) && ENVELOPE_KEY in parsed) {
      return JSON.stringify((parsed as Record<string, unknown>)[ENVELOPE_KEY]);
    }
  } catch {
    // Not JSON: leave it for validation to report.
  }
  return text;
}

const OPENING = /^\s*\{\s*"value"\s*:\s*/;

/**
 * Removes the envelope from streamed text as it arrives: holds text until the opening `{"value":`
 * is seen, then passes everything through except a trailing tail that may be the closing `}`.
 */
export class StreamUnwrapper {
  private head = "";
  private opened = false;
  private tail = "";

  push(delta: string): string {
    if (!this.opened) {
      this.head += delta;
      const match = OPENING.exec(this.head);
      if (!match) {
        // Still possible that more text completes the opening; give up once it clearly cannot.
        if (this.head.length > 64 || /^\s*[^\s{]/.test(this.head)) {
          this.opened = true;
          const all = this.head;
          this.head = "";
          return this.hold(all);
        }
        return "";
      }
      this.opened = true;
      const rest = this.head.slice(match[0].length);
      this.head = "";
      return this.hold(rest);
    }
    return this.hold(delta);
  }

  /** Whatever remains at the end, without the closing brace of the envelope. */
  end(): string {
    if (!this.opened) return this.head;
    const closing = /\}\s*$/.exec(this.tail);
    return closing ? this.tail.slice(0, closing.index).replace(/\s+$/, "") : this.tail;
  }

  private hold(text: string): string {
    // Keep back trailing whitespace and one "}" that could be the envelope's end.
    const combined = this.tail + text;
    const keep = /\}?\s*$/.exec(combined);
    const cut = keep ? keep.index : combined.length;
    this.tail = combined.slice(cut);
    return combined.slice(0, cut);
  }
}
