import "server-only";
/**
 * Dates as documents write them: `2026-03-03`, `3 March 2026`, `Mar 3, 2026`, `3rd of March 2026`,
 * `03.03.2026`, `03/03/2026`. Day-month order of slashed dates is taken from the document itself
 * (a `25/03/2026` elsewhere says day first); a date that could be either and has no such evidence
 * is only read when both orders give the same day (`03/03/2026`). Dotted dates are day first.
 */
export interface DateToken {
  start: number;
  end: number;
  /** YYYY-MM-DD. */
  iso: string;
}

const MONTHS: Record<string, number> = {};
const NAMES = [
  ["january", "jan", "januar", "janvier", "enero"],
  ["february", "feb", "februar", "février", "fevrier", "febrero"],
  ["march", "mar", "märz", "marz", "mars", "marzo"],
  ["april", "apr", "avril", "abril"],
  ["may", "mai", "mayo"],
  ["june", "jun", "juni", "juin", "junio"],
  ["july", "jul", "juli", "juillet", "julio"],
  ["august", "aug", "août", "aout", "agosto"],
  ["september", "sep", "sept", "septembre", "septiembre"],
  ["october", "oct", "oktober", "octobre", "octubre"],
  ["november", "nov", "novembre", "noviembre"],
  ["december", "dec", "dezember", "décembre", "decembre", "diciembre"],
];
NAMES.forEach((names, i) => names.forEach((n) => (MONTHS[n] = i + 1)));
const MONTH = `(${Object.keys(MONTHS).sort((a, b) => b.length - a.length).join("|")})`;

const ISO = /(?<![\p{L}\p{N}])(\d{4})-(\d{1,2})-(\d{1,2})(?![\p{N}])/gu;
const YMD_SLASH = /(?<![\p{L}\p{N}])(\d{4})\/(\d{1,2})\/(\d{1,2})(?![\p{N}])/gu;
const NUMERIC = /(?<![\p{L}\p{N}./-])(\d{1,2})([./-])(\d{1,2})\2(\d{4})(?![\p{N}])/gu;
const DAY_MONTH = new RegExp(`(?<![\\p{L}\\p{N}])(\\d{1,2})(?:st|nd|rd|th)?\\.?\\s+(?:of\\s+|de\\s+)?${MONTH}\\.?,?\\s+(?:de\\s+)?(\\d{4})(?![\\p{N}])`, "giu");
const MONTH_DAY = new RegExp(`(?<![\\p{L}\\p{N}])${MONTH}\\.?\\s+(\\d{1,2})(?:st|nd|rd|th)?,?\\s+(\\d{4})(?![\\p{N}])`, "giu");

const DAYS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function iso(year: number, month: number, day: number): string | null {
  if (month < 1 || month > 12 || day < 1 || day > DAYS[month - 1]!) return null;
  if (month === 2 && day === 29 && !(year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0))) return null;
  return `${String(year).padStart(4, "0")}-${String(month).padStart(2, "0")}-${String(day).padStart(2, "0")}`;
}

function each(pattern: RegExp, text: string, take: (m: RegExpExecArray) => string | null, out: DateToken[]) {
  pattern.lastIndex = 0;
  for (let m = pattern.exec(text); m; m = pattern.exec(text)) {
    const date = take(m);
    if (date) out.push({ start: m.index, end: m.index + m[0].length, iso: date });
  }
}

export function scanDates(text: string): DateToken[] {
  const out: DateToken[] = [];
  each(ISO, text, (m) => iso(+m[1]!, +m[2]!, +m[3]!), out);
  each(YMD_SLASH, text, (m) => iso(+m[1]!, +m[2]!, +m[3]!), out);
  each(DAY_MONTH, text, (m) => iso(+m[3]!, MONTHS[m[2]!.toLowerCase()]!, +m[1]!), out);
  each(MONTH_DAY, text, (m) => iso(+m[3]!, MONTHS[m[1]!.toLowerCase()]!, +m[2]!), out);
  // Slashed and dashed day/month order: what this document's unambiguous dates say.
  const numeric: RegExpExecArray[] = [];
  NUMERIC.lastIndex = 0;
  for (let m = NUMERIC.exec(text); m; m = NUMERIC.exec(text)) numeric.push(m);
  let dayFirst = 0;
  let monthFirst = 0;
  for (const m of numeric) {
    if (m[2] === ".") continue;
    if (+m[1]! > 12 && +m[3]! <= 12) dayFirst++;
    if (+m[3]! > 12 && +m[1]! <= 12) monthFirst++;
  }
  for (const m of numeric) {
    const a = +m[1]!;
    const b = +m[3]!;
    const year = +m[4]!;
    let date: string | null = null;
    if (m[2] === "." || a > 12) date = iso(year, b, a);
    else if (b > 12) date = iso(year, a, b);
    else if (a === b || (dayFirst > 0 && monthFirst === 0)) date = iso(year, b, a);
    else if (monthFirst > 0 && dayFirst === 0) date = iso(year, a, b);
    if (date) out.push({ start: m.index, end: m.index + m[0].length, iso: date });
  }
  return out;
}

/** The date part of an ISO date or date-time value (`2026-03-03`, `2026-03-03T10:00:00Z`), or null. */
export function isoDateOf(value: string): string | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:[T ][\d:.]+(?:Z|[+-]\d{2}:?\d{2})?)?$/.exec(value);
  return m ? iso(+m[1]!, +m[2]!, +m[3]!) : null;
}
