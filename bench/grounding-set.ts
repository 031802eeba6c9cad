/**
 * The labelled set of bench:grounding, built from templates with a seed: invoices, contracts,
 * forms and emails whose values are written in varied formats (numbers `1.234,50 €`, `$1,234.50`,
 * `1 234,5`; dates `3 March 2026`, `03.03.2026`, `Mar 3, 2026`; names in other case, without
 * accents, or misspelt), with distractors (a total that is also a line amount, filler clauses full
 * of numbers and dates) and planted values that are absent. Each document records where each of
 * its values is written (line and column), so the truth's offsets are found again in the text a
 * format's extraction yields.
 */
import { seededRandom, type Random } from "../test/helpers/random";

export type Family = "invoice" | "contract" | "form" | "email";
export type Format = "text" | "html" | "pdf" | "docx";
export const FORMATS: readonly Format[] = ["text", "html", "pdf", "docx"];

export interface TruthValue {
  pointer: string;
  /** Where it is written: line index, column, the written text; null for a planted absent value. */
  at: { line: number; column: number; written: string } | null;
}

export interface LabelledDocument {
  id: string;
  family: Family;
  format: Format;
  lines: string[];
  object: Record<string, unknown>;
  truth: TruthValue[];
}

const COMPANIES = ["Acme Industries", "Müller & Söhne GmbH", "Northwind Traders", "Globex Corporation", "Initech Systems", "Soylent Foods", "Umbrella Logistics", "Stark Manufacturing", "Wayne Enterprises", "Hooli Software", "Vandelay Imports", "Pied Piper Labs", "Côté Électrique SARL", "Nakatomi Trading"];
const PEOPLE = ["Anna Schmidt", "José García", "Li Wei", "Olivia Brown", "Noah Johnson", "Émilie Dubois", "Lukas Müller", "Sofia Rossi", "Mateo Fernández", "Hannah Becker", "Ava Wilson", "Jonas Fischer"];
const CITIES = ["Berlin", "Paris", "Madrid", "Lisbon", "Vienna", "Zürich", "Amsterdam", "Copenhagen", "Dublin", "Prague"];
const ITEMS = ["Consulting services", "Office chairs", "Laptop stand", "Cloud hosting", "Annual maintenance", "Training workshop", "Network switch", "Design review", "Travel expenses", "Software licence"];
const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];
const FILLER = [
  "The parties shall cooperate in good faith and keep each other informed.",
  "Any notice under this agreement shall be given in writing.",
  "Payments not made within {n} days bear interest at {r}% per year.",
  "The schedule attached on {d} forms part of this agreement.",
  "A deposit of {a} was received earlier and is not part of this amount.",
  "Reference {c} applies to the previous order of {a}.",
];

const pick = <T>(r: Random, list: readonly T[]): T => list[Math.floor(r() * list.length)]!;
const int = (r: Random, lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1));

interface DateParts {
  y: number;
  m: number;
  d: number;
}
const iso = ({ y, m, d }: DateParts) => `${y}-${String(m).padStart(2, "0")}-${String(d).padStart(2, "0")}`;
const randomDate = (r: Random, year = int(r, 2025, 2027)): DateParts => ({ y: year, m: int(r, 1, 12), d: int(r, 1, 28) });

/** A date as documents write it; slashed forms only where the day cannot be read as a month. */
function writeDate(r: Random, date: DateParts): string {
  const { y, m, d } = date;
  const dd = String(d).padStart(2, "0");
  const mm = String(m).padStart(2, "0");
  const forms = [
    iso(date),
    `${d} ${MONTHS[m - 1]} ${y}`,
    `${MONTHS[m - 1]} ${d}, ${y}`,
    `${MONTHS[m - 1]!.slice(0, 3)} ${d}, ${y}`,
    `${dd}.${mm}.${y}`,
    ...(d > 12 ? [`${dd}/${mm}/${y}`, `${mm}/${dd}/${y}`] : []),
  ];
  return pick(r, forms);
}

/** An amount as documents write it (with or without currency), and `latin1` when the format cannot show €. */
function writeAmount(r: Random, value: number, latin1: boolean): string {
  const [whole, cents] = value.toFixed(2).split(".") as [string, string];
  const group = (sep: string) => whole.replace(/\B(?=(\d{3})+(?!\d))/g, sep);
  const forms = [`${group(",")}.${cents}`, `${group(".")},${cents}`, `${group(" ")},${cents}`, `$${group(",")}.${cents}`, `EUR ${group(",")}.${cents}`, `${whole}.${cents}`, latin1 ? `${group(".")},${cents} EUR` : `${group(".")},${cents} €`];
  return pick(r, forms);
}

/** How the object writes a string the document has: as written, in capitals, without accents. */
function objectForm(r: Random, written: string): string {
  const roll = r();
  if (roll < 0.12) return written.toUpperCase();
  if (roll < 0.22) return written.normalize("NFD").replace(/\p{M}/gu, "");
  return written;
}

/** A misspelling of a word of five letters or more (one letter dropped), or the text as it is. */
function misspelt(r: Random, text: string): string {
  const words = text.split(" ");
  const long = words.map((w, i) => [w, i] as const).filter(([w]) => w.length >= 6);
  if (long.length === 0 || words.length < 2) return text;
  const [word, i] = pick(r, long);
  const k = int(r, 1, word.length - 2);
  words[i] = word.slice(0, k) + word.slice(k + 1);
  return words.join(" ");
}

/** Builds one document line by line, recording where each value is written. */
class Builder {
  lines: string[] = [];
  truth: TruthValue[] = [];
  object: Record<string, unknown> = {};
  constructor(readonly r: Random) {}
  line(text: string) {
    this.lines.push(text);
  }
  /** A line `before + written + after` whose `written` is the value at `pointer` (set to `value` in the object). */
  value(pointer: string, value: unknown, before: string, written: string, after = "") {
    this.truth.push({ pointer, at: { line: this.lines.length, column: before.length, written } });
    this.lines.push(before + written + after);
    setAt(this.object, pointer, value);
  }
  absent(pointer: string, value: unknown) {
    this.truth.push({ pointer, at: null });
    setAt(this.object, pointer, value);
  }
}

function setAt(target: Record<string, unknown>, pointer: string, value: unknown) {
  const keys = pointer.slice(1).split("/");
  let node: Record<string, unknown> | unknown[] = target;
  keys.forEach((key, i) => {
    const last = i === keys.length - 1;
    const container = node as Record<string, unknown>;
    if (last) container[key] = value;
    else {
      if (container[key] === undefined) container[key] = /^\d+$/.test(keys[i + 1]!) ? [] : {};
      node = container[key] as Record<string, unknown>;
    }
  });
}

const money = (r: Random, lo: number, hi: number) => Math.round((lo + r() * (hi - lo)) * 100) / 100;

function filler(b: Builder, count: number, latin1: boolean) {
  for (let i = 0; i < count; i++) {
    const text = pick(b.r, FILLER)
      .replace("{n}", String(int(b.r, 10, 90)))
      .replace("{r}", String(int(b.r, 2, 12)))
      .replace("{d}", writeDate(b.r, randomDate(b.r)))
      .replace("{a}", writeAmount(b.r, money(b.r, 10, 5000), latin1))
      .replace("{c}", `REF-${int(b.r, 1000, 9999)}`);
    b.line(`${i + 1}. ${text}`);
  }
}

/** Planted values that the document surely does not hold: codes and a date in a year it never names, an amount whose digits it never has. */
function plantAbsent(b: Builder) {
  const text = b.lines.join("\n");
  let code: string;
  do code = `PO-${int(b.r, 100000, 999999)}`;
  while (text.includes(code.slice(3)));
  b.absent("/purchaseOrder", code);
  let amount: number;
  do amount = money(b.r, 100, 99999);
  while (text.includes(String(Math.trunc(amount))) || text.includes(Math.trunc(amount).toLocaleString("en-US")) || text.includes(Math.trunc(amount).toLocaleString("de-DE")));
  b.absent("/discount", amount);
  b.absent("/approvedOn", iso(randomDate(b.r, 2031)));
  b.absent("/approver", pick(b.r, ["Quentin Blackwood", "Priya Raman", "Tobias Lindqvist"]));
}

function invoice(b: Builder, latin1: boolean) {
  const { r } = b;
  const vendor = pick(r, COMPANIES);
  b.value("/vendor", objectForm(r, vendor), "", vendor);
  const number = `INV-${int(r, 10000, 99999)}`;
  b.value("/number", number, "Invoice no. ", number);
  const issued = randomDate(r);
  b.value("/issueDate", iso(issued), "Issue date: ", writeDate(r, issued));
  const due = randomDate(r);
  b.value("/dueDate", iso(due), "Due date: ", writeDate(r, due));
  const customer = pick(r, COMPANIES.filter((c) => c !== vendor));
  b.value("/customer", objectForm(r, customer), "Bill to: ", customer);
  const count = int(r, 1, 4);
  let total = 0;
  for (let i = 0; i < count; i++) {
    const description = pick(r, ITEMS);
    const quantity = int(r, 1, 20);
    const amount = money(r, 20, 4000);
    total += amount;
    b.value(`/items/${i}/description`, description, `${i + 1}. `, description, "");
    b.value(`/items/${i}/quantity`, quantity, "quantity ", String(quantity), "");
    b.value(`/items/${i}/amount`, amount, "amount ", writeAmount(r, amount, latin1));
  }
  total = Math.round(total * 100) / 100;
  const rate = pick(r, [7, 10, 19, 20, 21]);
  b.value("/vatRate", r() < 0.5 ? rate : rate / 100, "VAT rate ", `${rate}%`);
  // With one item, its amount is the total too: a distractor for /total.
  b.value("/total", total, "Total due: ", writeAmount(r, total, latin1));
  const paid = r() < 0.5;
  b.value("/paid", paid, "Paid: ", paid ? pick(r, ["yes", "Yes"]) : pick(r, ["no", "No"]));
  if (r() < 0.5) b.line(`Previous balance carried: ${writeAmount(r, total, latin1)} (settled)`);
}

function contract(b: Builder, latin1: boolean) {
  const { r } = b;
  const provider = pick(r, COMPANIES);
  const client = pick(r, COMPANIES.filter((c) => c !== provider));
  b.line("SERVICE AGREEMENT");
  b.value("/provider", objectForm(r, provider), "This agreement is made between ", provider, " (the Provider)");
  b.value("/client", objectForm(r, client), "and ", client, " (the Client).");
  const start = randomDate(r);
  b.value("/effectiveDate", iso(start), "Effective date: ", writeDate(r, start));
  const months = pick(r, [6, 12, 24, 36]);
  b.value("/termMonths", months, "Term: ", String(months), " months");
  const fee = money(r, 500, 20000);
  b.value("/monthlyFee", fee, "Monthly fee: ", writeAmount(r, fee, latin1));
  filler(b, int(r, 3, 30), latin1);
  const city = pick(r, CITIES);
  b.value("/governingCity", city, "Courts of ", city, " have jurisdiction.");
  const renewal = r() < 0.5;
  b.value("/autoRenewal", renewal, "", renewal ? "[x]" : "[ ]", " Auto renewal");
  const signatory = pick(r, PEOPLE);
  const written = r() < 0.3 ? misspelt(r, signatory) : signatory;
  b.value("/signatory", signatory, "Signed for the Client by ", written);
  const notice = pick(r, [30, 45, 60, 90]);
  b.value("/noticeDays", notice, "Notice period: ", String(notice), " days");
}

function form(b: Builder) {
  const { r } = b;
  b.line("APPLICATION FORM");
  const name = pick(r, PEOPLE);
  b.value("/fullName", objectForm(r, name), "Full name: ", name);
  const born = randomDate(r, int(r, 1950, 2004));
  b.value("/dateOfBirth", iso(born), "Date of birth: ", writeDate(r, born));
  const email = `${name.toLowerCase().normalize("NFD").replace(/\p{M}/gu, "").replace(" ", ".")}@example.org`;
  b.value("/email", email, "Email: ", email);
  const phone = `+49 30 ${int(r, 1000000, 9999999)}`;
  b.value("/phone", phone, "Phone: ", phone);
  const city = pick(r, CITIES);
  b.value("/city", city, "City: ", city);
  const income = money(r, 20000, 150000);
  b.value("/annualIncome", income, "Annual income: ", writeAmount(r, income, true));
  const employed = r() < 0.5;
  b.value("/employed", employed, "Employed: ", employed ? "yes" : "no");
  const dependants = int(r, 0, 5);
  b.value("/dependants", dependants, "Number of dependants: ", String(dependants));
}

function email(b: Builder, latin1: boolean) {
  const { r } = b;
  const to = pick(r, PEOPLE);
  const from = pick(r, PEOPLE.filter((p) => p !== to));
  b.value("/recipient", objectForm(r, to.split(" ")[0]!), "Hi ", to.split(" ")[0]!, ",");
  const met = randomDate(r);
  b.value("/meetingDate", iso(met), "Thanks for meeting on ", writeDate(r, met), ".");
  const city = pick(r, CITIES);
  b.value("/meetingCity", city, "It was good to see the team in ", city, ".");
  const seats = int(r, 2, 250);
  b.value("/quantity", seats, "As discussed, the quote covers ", String(seats), " seats");
  const price = money(r, 1000, 90000);
  b.value("/quote", price, "for a total of ", writeAmount(r, price, latin1), " per year.");
  const company = pick(r, COMPANIES);
  b.value("/company", objectForm(r, company), "The offer is made by ", company, ".");
  const until = randomDate(r);
  b.value("/validUntil", iso(until), "It is valid until ", writeDate(r, until), ".");
  b.value("/sender", from, "Best regards, ", r() < 0.3 ? misspelt(r, from) : from);
}

const BUILD: Record<Family, (b: Builder, latin1: boolean) => void> = { invoice, contract, form: (b) => form(b), email };

/** `count` documents of the given families from `seed`, in turn in each format (PDFs write no character a plain PDF font lacks: EUR, not €). */
export function buildSet(seed: number, families: readonly Family[], count: number, options: { filler?: number } = {}): LabelledDocument[] {
  const r = seededRandom(seed);
  return Array.from({ length: count }, (_, i) => {
    const family = families[i % families.length]!;
    const format = FORMATS[Math.floor(i / families.length) % FORMATS.length]!;
    const b = new Builder(r);
    BUILD[family](b, format === "pdf");
    if (options.filler) filler(b, options.filler, format === "pdf");
    plantAbsent(b);
    return { id: `${family}-${format}-${seed}-${i}`, family, format, lines: b.lines, object: b.object, truth: b.truth };
  });
}
