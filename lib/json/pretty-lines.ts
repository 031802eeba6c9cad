import { escapePointerSegment } from "./pointer";

/**
 * Streamed JSON text, indented as it arrives: the lines JSON.stringify(value, null, 2) would write
 * for the value (strings and numbers keep the text the model wrote), built with constant work per
 * character, so that a view of a long streamed document does work proportional to each delta,
 * never to the whole document. Every line knows the JSON Pointer of the value it starts, its depth,
 * and — for a line that opens an object or array — the line that closes it (folding). Lines before
 * the last never change once written; the last one grows. Browser-safe. The text is assumed to be
 * JSON (the partial parser judges it); anything else is laid out as well as it goes.
 */
export class PrettyLines {
  /** Finished lines' text; the line being written is `current`. */
  readonly lines: string[] = [];
  readonly depths: number[] = [];
  readonly paths: string[] = [];
  /** For a line that opens a container: the index of the line that closes it, -1 until it closes. */
  readonly foldEnds: number[] = [];
  current = "";
  private currentDepth = 0;
  private currentPath = "";
  private currentFold = -1;
  private readonly stack: { array: boolean; index: number; key: string | null; path: string; line: number }[] = [];
  private inString = false;
  private escape = false;
  private isKey = false;
  private keyText = "";
  /** An opener whose first content decides between `[]` on one line and a new indented line. */
  private pendingOpen = false;
  private afterColon = false;
  /** Bumped on every change: views compare it to know whether to redraw. */
  version = 0;

  /** How many lines there are, the one being written included. */
  get count(): number {
    return this.lines.length + 1;
  }

  line(i: number): string {
    return i < this.lines.length ? this.lines[i]! : this.current;
  }
  depth(i: number): number {
    return i < this.lines.length ? this.depths[i]! : this.currentDepth;
  }
  path(i: number): string {
    return i < this.lines.length ? this.paths[i]! : this.currentPath;
  }
  foldEnd(i: number): number {
    return i < this.lines.length ? this.foldEnds[i]! : this.currentFold;
  }

  /** The whole text so far (for tests and copying; proportional to the document). */
  text(): string {
    return [...this.lines, this.current].join("\n");
  }

  push(text: string): void {
    if (text.length === 0) return;
    this.version++;
    let i = 0;
    while (i < text.length) {
      if (this.inString) {
        // A run of ordinary string characters is copied in one slice.
        let j = i;
        while (j < text.length) {
          const c = text.charCodeAt(j);
          if (this.escape) this.escape = false;
          else if (c === 92) this.escape = true;
          else if (c === 34) break;
          j++;
        }
        const piece = text.slice(i, j);
        this.current += piece;
        if (this.isKey) this.keyText += piece;
        if (j < text.length) {
          this.current += '"';
          this.inString = false;
          if (this.isKey) this.endKey();
          j++;
        }
        i = j;
        continue;
      }
      this.char(text[i]!);
      i++;
    }
  }

  private char(c: string): void {
    if (c === " " || c === "\n" || c === "\r" || c === "\t") return;
    if (this.pendingOpen) {
      this.pendingOpen = false;
      const top = this.stack[this.stack.length - 1]!;
      if ((c === "]" && top.array) || (c === "}" && !top.array)) {
        this.current += c;
        this.stack.pop();
        this.currentFold = -1;
        return;
      }
      this.newLine(this.stack.length);
    }
    switch (c) {
      case "{":
      case "[":
        this.startValue();
        this.current += c;
        this.currentFold = -1;
        this.stack.push({ array: c === "[", index: -1, key: null, path: this.valuePath(), line: this.lines.length });
        this.pendingOpen = true;
        this.afterColon = false;
        return;
      case "}":
      case "]": {
        const frame = this.stack.pop();
        this.newLine(this.stack.length);
        this.current += c;
        this.currentPath = frame ? `${frame.path}#end` : "#end";
        if (frame) this.foldEnds[frame.line] = this.lines.length;
        return;
      }
      case ",":
        this.current += ",";
        this.newLine(this.stack.length);
        return;
      case ":":
        this.current += ": ";
        this.afterColon = true;
        return;
      case '"': {
        const top = this.stack[this.stack.length - 1];
        if (top && !top.array && !this.afterColon) {
          this.isKey = true;
          this.keyText = "";
        } else {
          this.startValue();
        }
        this.afterColon = false;
        this.inString = true;
        this.current += '"';
        return;
      }
      default:
        // A number or literal: its first character starts a value.
        if (this.afterColon || this.lastIsLineStart()) this.startValue();
        this.afterColon = false;
        this.current += c;
    }
  }

  /** Whether nothing but indentation is on the line being written. */
  private lastIsLineStart(): boolean {
    return this.current.trim() === "";
  }

  /** A value begins: in an array it is the next item, and a line starting with it is its line. */
  private startValue(): void {
    const top = this.stack[this.stack.length - 1];
    if (top?.array) {
      top.index++;
      this.currentPath = `${top.path}/${top.index}`;
    } else if (!top) {
      this.currentPath = "";
    }
  }

  private valuePath(): string {
    const top = this.stack[this.stack.length - 1];
    if (!top) return "";
    return top.array ? `${top.path}/${top.index}` : `${top.path}/${escapePointerSegment(top.key ?? "")}`;
  }

  private endKey(): void {
    this.isKey = false;
    const top = this.stack[this.stack.length - 1]!;
    let key: string;
    try {
      key = JSON.parse(`"${this.keyText}"`) as string;
    } catch {
      key = this.keyText;
    }
    top.key = key;
    this.currentPath = `${top.path}/${escapePointerSegment(key)}`;
  }

  private newLine(depth: number): void {
    this.lines.push(this.current);
    this.depths.push(this.currentDepth);
    this.paths.push(this.currentPath);
    this.foldEnds.push(this.currentFold);
    this.currentDepth = depth;
    this.current = "  ".repeat(depth);
    this.currentFold = -1;
    const top = this.stack[this.stack.length - 1];
    this.currentPath = top ? `${top.path}#end` : "";
  }
}
