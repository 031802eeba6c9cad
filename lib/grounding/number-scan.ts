import "server-only";
/**
 * Numbers as documents write them: `1,234.50`, `1.234,50 €`, `1 234,5`, `$1,234.50`, `12.5%`,
 * `-3`. Each written number yields the values it can mean (an ambiguous `1.234` both 1234 and
 * 1.234; a percentage both 12.5 and 0.125), found in one pass over the text.
 */
export interface NumberToken {
  start: number;
  end: number;
  /** The written number without currency, sign spacing or percent sign (compared with String(value) for `exact`). */
  core: string;
  values: number[];
}

// A number not inside a word or a longer number: groups of three after one separator kind, or plain digits, with an optional decimal part.
const NUMBER =
  /(?<![\p{L}\p{N}_]|[\p{N}][.,])([-−]\s?)?(?:[$€£¥₹]\s?)?(\d{1,3}(?:[,.'\u00a0\u202f ]\d{3})+(?:[.,]\d+)?|\d+(?:[.,]\d+)?)(\s?%)?(?![\p{L}\p{N}_]|[.,]\d)/gu;

/** The values a written number (digits and separators) can mean. */
export function readNumber(written: string): number[] {
  const seps = written.replace(/\d/g, "");
  if (seps === "") return [Number(written)];
  const kinds = new Set(seps);
  const plain = (s: string) => Number(s.replace(/[^\d.]/g, ""));
  if (kinds.size >= 2) {
    // The last separator is the decimal one; the others group.
    const last = Math.max(written.lastIndexOf("."), written.lastIndexOf(","));
    const decimalSep = written[last]!;
    if (seps.slice(0, -1).includes(decimalSep)) return [];
    return [plain(written.slice(0, last).replace(/\D/g, "") + "." + written.slice(last + 1))];
  }
  const sep = seps[0]!;
  if (seps.length > 1) return sep === "." || sep === "," || sep === "'" || sep === " " || sep === "\u00a0" || sep === "\u202f" ? [plain(written.replace(/\D/g, ""))] : [];
  const [head, tail] = written.split(sep) as [string, string];
  if (sep !== "." && sep !== ",") return [Number(head + tail)];
  const decimal = Number(`${head}.${tail}`);
  // `1.234` or `1,234`: grouping or a decimal part; both are possible values.
  if (tail.length === 3 && head.length <= 3 && head !== "0") return [Number(head + tail), decimal];
  return [decimal];
}

export function scanNumbers(text: string): NumberToken[] {
  const out: NumberToken[] = [];
  NUMBER.lastIndex = 0;
  for (let m = NUMBER.exec(text); m; m = NUMBER.exec(text)) {
    const written = m[2]!;
    const negative = m[1] !== undefined;
    const sign = negative ? -1 : 1;
    let values = readNumber(written).map((v) => sign * v);
    if (m[3]) values = [...values, ...values.map((v) => v / 100)];
    out.push({ start: m.index, end: m.index + m[0].length, core: (negative ? "-" : "") + written, values });
    // `2 345` may be two numbers: each part is also a token.
    if (/[\s\u00a0\u202f]/.test(written)) {
      const part = /\d+/g;
      const base = m.index + m[0].indexOf(written);
      for (let p = part.exec(written); p; p = part.exec(written)) out.push({ start: base + p.index, end: base + p.index + p[0].length, core: p[0], values: [Number(p[0])] });
    }
  }
  return out;
}

/** A number as a map key: equal values (to 12 significant digits) share it. */
export const numberKey = (value: number) => (Number.isFinite(value) ? String(Number(value.toPrecision(12))) : "");
