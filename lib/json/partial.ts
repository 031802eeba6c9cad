import { escapePointerSegment, unescapePointerSegment } from "./pointer";
import { own, setOwn } from "./own";
/**
 * An incremental JSON parser: feed it text as it streams in and read the value built so far.
 * One pass over the text, constant work per character, so the total cost is linear in the output
 * size (SDKs that re-parse the accumulated text on every chunk are quadratic). It records the
 * JSON Pointer of every value as it closes, which is what the playground's field states (and
 * validated partials) are built on. Browser-safe.
 */

type Container = Record<string, unknown> | unknown[];

interface Frame {
  container: Container;
  path: string;
  /** Object frames: the key whose value comes next, once read. */
  key: string | null;
  /** What the grammar expects next inside this container. */
  expect: "key-or-end" | "key" | "colon" | "value" | "value-or-end" | "comma-or-end";
}

type Token =
  | { kind: "string"; parts: string[]; chunk: string; isKey: boolean; escape: boolean; unicode: string | null }
  | { kind: "literal"; text: string };

export interface PartialSnapshot {
  /** The value so far, with an unfinished string or number in place (a copy: safe to keep). */
  value: unknown;
  /** Pointer of the value being written, or null between values. */
  streamingPath: string | null;
}

const SIMPLE_ESCAPES: Record<string, string> = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };

export class PartialJsonParser {
  private root: unknown = undefined;
  private hasRoot = false;
  private readonly stack: Frame[] = [];
  private token: Token | null = null;
  private complete = false;
  /** Pointers of values that have closed, in closing order. */
  readonly closed: string[] = [];
  /** Set when the text can no longer be JSON. */
  error: string | null = null;
  private offset = 0;

  /** `onClose` hears of every value as it closes, with its pointer (the server validates it there). */
  constructor(private readonly onClose?: (path: string, value: unknown) => void) {}

  /** Feeds the next piece of text. Returns false once the text is not JSON. */
  push(text: string): boolean {
    for (let i = 0; i < text.length && this.error === null; i++) this.step(text[i]!);
    this.offset += text.length;
    return this.error === null;
  }

  /** Whether a whole JSON value has been read. */
  get done(): boolean {
    if (this.token?.kind === "literal" && this.stack.length === 0) return parseLiteral(this.token.text) !== undefined;
    return this.complete;
  }

  /** The final value; throws when the text did not make one complete JSON value. */
  result(): unknown {
    if (this.token?.kind === "literal" && this.stack.length === 0) this.finishLiteral();
    if (this.error) throw new SyntaxError(this.error);
    if (!this.complete) throw new SyntaxError("incomplete JSON");
    return this.root;
  }

  snapshot(): PartialSnapshot {
    const value = this.hasRoot ? structuredClone(this.root) : undefined;
    const token = this.token;
    if (!token || (token.kind === "string" && token.isKey)) {
      return { value, streamingPath: null };
    }
    const partial = token.kind === "string" ? token.parts.join("") + token.chunk : partialLiteral(token.text);
    const frame = this.stack[this.stack.length - 1];
    if (!frame) return { value: partial, streamingPath: "" };
    // Find the copy of the current container inside the cloned value, then place the partial there.
    let target: unknown = value;
    for (const segment of frame.path.split("/").slice(1)) {
      target = own(target, unescapePointerSegment(segment));
    }
    if (Array.isArray(target)) {
      target.push(partial);
      return { value, streamingPath: `${frame.path}/${target.length - 1}` };
    }
    setOwn(target as Record<string, unknown>, frame.key!, partial);
    return { value, streamingPath: `${frame.path}/${escapePointerSegment(frame.key!)}` };
  }

  private fail(message: string): void {
    this.error = `${message} at character ${this.offset}`;
  }

  private step(c: string): void {
    const token = this.token;
    if (token?.kind === "string") return this.stringChar(token, c);
    if (token?.kind === "literal") {
      if (/[0-9a-zA-Z+\-.]/.test(c)) {
        token.text += c;
        return;
      }
      this.finishLiteral();
      if (this.error) return;
    }
    if (c === " " || c === "\n" || c === "\r" || c === "\t") return;
    if (this.complete) return this.fail(`unexpected "${c}" after the JSON value`);

    const frame = this.stack[this.stack.length - 1];
    if (frame) {
      if (frame.expect === "colon") {
        if (c !== ":") return this.fail(`expected ":" but got "${c}"`);
        frame.expect = "value";
        return;
      }
      if (frame.expect === "comma-or-end") {
        if (c === ",") {
          frame.expect = Array.isArray(frame.container) ? "value" : "key";
          return;
        }
        if (c === (Array.isArray(frame.container) ? "]" : "}")) return this.closeContainer();
        return this.fail(`expected "," or the end of the ${Array.isArray(frame.container) ? "array" : "object"} but got "${c}"`);
      }
      if (frame.expect === "key-or-end" || frame.expect === "key") {
        if (c === "}" && frame.expect === "key-or-end") return this.closeContainer();
        if (c !== '"') return this.fail(`expected a property name but got "${c}"`);
        this.token = { kind: "string", parts: [], chunk: "", isKey: true, escape: false, unicode: null };
        return;
      }
      if (c === "]" && frame.expect === "value-or-end") return this.closeContainer();
    }
    this.startValue(c);
  }

  private startValue(c: string): void {
    if (c === "{") return this.openContainer({}, "key-or-end");
    if (c === "[") return this.openContainer([], "value-or-end");
    if (c === '"') {
      this.token = { kind: "string", parts: [], chunk: "", isKey: false, escape: false, unicode: null };
      return;
    }
    if (/[-0-9tfn]/.test(c)) {
      this.token = { kind: "literal", text: c };
      return;
    }
    this.fail(`unexpected "${c}"`);
  }

  private stringChar(token: Extract<Token, { kind: "string" }>, c: string): void {
    if (token.unicode !== null) {
      if (!/[0-9a-fA-F]/.test(c)) return this.fail("invalid \\u escape");
      token.unicode += c;
      if (token.unicode.length === 4) {
        token.chunk += String.fromCharCode(parseInt(token.unicode, 16));
        token.unicode = null;
      }
      return;
    }
    if (token.escape) {
      token.escape = false;
      if (c === "u") {
        token.unicode = "";
        return;
      }
      const replacement = SIMPLE_ESCAPES[c];
      if (replacement === undefined) return this.fail(`invalid escape "\\${c}"`);
      token.chunk += replacement;
      return;
    }
    if (c === "\\") {
      token.escape = true;
      return;
    }
    if (c === '"') {
      const text = token.parts.join("") + token.chunk;
      this.token = null;
      if (token.isKey) {
        const frame = this.stack[this.stack.length - 1]!;
        frame.key = text;
        frame.expect = "colon";
      } else {
        this.closeValue(text);
      }
      return;
    }
    if (c < " ") return this.fail("control character in a string");
    token.chunk += c;
    // Keep the growing string in pieces so that appending stays cheap for long strings.
    if (token.chunk.length >= 1024) {
      token.parts.push(token.chunk);
      token.chunk = "";
    }
  }

  private finishLiteral(): void {
    const token = this.token as Extract<Token, { kind: "literal" }>;
    this.token = null;
    const value = parseLiteral(token.text);
    if (value === undefined) return this.fail(`"${token.text}" is not a JSON value`);
    this.closeValue(value);
  }

  private openContainer(container: Container, expect: Frame["expect"]): void {
    const path = this.attach(container);
    if (path === null) return;
    this.stack.push({ container, path, key: null, expect });
  }

  private closeContainer(): void {
    const frame = this.stack.pop()!;
    this.closed.push(frame.path);
    this.onClose?.(frame.path, frame.container);
    this.afterValue();
  }

  /** Places a finished scalar in its parent (or as the root). */
  private closeValue(value: unknown): void {
    const path = this.attach(value);
    if (path === null) return;
    this.closed.push(path);
    this.onClose?.(path, value);
    this.afterValue();
  }

  /** Puts a value into the current container; returns its pointer. */
  private attach(value: unknown): string | null {
    const frame = this.stack[this.stack.length - 1];
    if (!frame) {
      if (this.hasRoot) {
        this.fail("more than one JSON value");
        return null;
      }
      this.root = value;
      this.hasRoot = true;
      return "";
    }
    if (frame.expect !== "value" && frame.expect !== "value-or-end") {
      this.fail("a value where none is expected");
      return null;
    }
    if (Array.isArray(frame.container)) {
      frame.container.push(value);
      return `${frame.path}/${frame.container.length - 1}`;
    }
    setOwn(frame.container, frame.key!, value);
    return `${frame.path}/${escapePointerSegment(frame.key!)}`;
  }

  private afterValue(): void {
    const frame = this.stack[this.stack.length - 1];
    if (frame) frame.expect = "comma-or-end";
    else this.complete = true;
  }
}

function parseLiteral(text: string): unknown {
  if (text === "true") return true;
  if (text === "false") return false;
  if (text === "null") return null;
  if (/^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/.test(text)) return Number(text);
  return undefined;
}

/** What an unfinished literal shows while it streams: a number so far, or the text. */
function partialLiteral(text: string): unknown {
  const complete = parseLiteral(text);
  if (complete !== undefined) return complete;
  const number = Number.parseFloat(text);
  return Number.isNaN(number) ? text : number;
}
