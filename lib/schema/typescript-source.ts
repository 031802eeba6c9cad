import "server-only";
/**
 * A JSON Schema as TypeScript source: a type and a zod schema of the same values, for `genserve
 * types` (workflows' default schemas as a typed module). No converter package is installed, so this
 * covers the subset genserve's schemas use and says where it stops:
 *
 * - covered: `type` (one or a list, `null` included), `enum`, `const`, `properties` / `required` /
 *   `additionalProperties` (false: exact; a schema: a record of it; absent or true: other keys
 *   `unknown`), `items` (one schema), `anyOf` / `oneOf` (a union), `allOf` (an intersection),
 *   local `$ref`s to `$defs` / `definitions` (named types, recursion included), and in zod the
 *   bounds `minimum` / `maximum` / `minLength` / `maxLength` / `minItems` / `maxItems` and integers;
 * - not covered, typed more loosely than validated (genserve's runs still validate them):
 *   `pattern` and `format` (plain strings), `prefixItems`, `contains`, `multipleOf`, `not`,
 *   `if`/`then`/`else`, `dependentSchemas`, `patternProperties`, `unevaluated*`, remote `$ref`s
 *   (`unknown`), `oneOf`'s exclusivity (a plain union), objects and arrays in `enum` / `const`
 *   (`unknown`). `$defs` names that make the same identifier (`foo-bar`, `foo_bar`) are numbered.
 */

type Schema = Record<string, unknown> | boolean;

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === "object" && !Array.isArray(value);
const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
/** A value a literal type (and `z.literal`) can name; an object or array in `enum`/`const` is typed `unknown` instead. */
const isPrimitive = (value: unknown) => value === null || typeof value !== "object";
const key = (name: string) => (IDENTIFIER.test(name) ? name : JSON.stringify(name));

/** A name usable as a TypeScript identifier, in PascalCase: `extract-invoice` → `ExtractInvoice`. */
export function pascalName(text: string): string {
  const words = text.split(/[^A-Za-z0-9]+/).filter(Boolean);
  const name = words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join("");
  return /^[0-9]/.test(name) ? `_${name}` : name || "_";
}

export interface SchemaSource {
  /** `export type …` lines: the named definitions, then `typeName` itself. */
  types: string;
  /** `export const …` lines of zod schemas: definitions (lazy), then `constName`. */
  zod: string;
}

/** The type and zod schema of `schema`, named `typeName` / `constName`; its `$defs` become `typeName_Def` types. */
export function schemaSource(schema: Record<string, unknown>, typeName: string, constName: string): SchemaSource {
  const defs = { ...(isObject(schema.definitions) ? schema.definitions : {}), ...(isObject(schema.$defs) ? schema.$defs : {}) };
  // Names that become the same identifier (`foo-bar`, `foo_bar`) are numbered: FooBar, FooBar2…
  const defIds = new Map<string, string>();
  for (const name of Object.keys(defs)) {
    const base = pascalName(name);
    let id = base;
    for (let n = 2; [...defIds.values()].includes(id); n++) id = `${base}${n}`;
    defIds.set(name, id);
  }
  const defType = (name: string) => `${typeName}_${defIds.get(name)!}`;
  const defConst = (name: string) => `${constName}_${defIds.get(name)!}`;
  const refName = (ref: unknown): string | null => {
    const match = typeof ref === "string" ? /^#\/(?:\$defs|definitions)\/([^/]+)$/.exec(ref) : null;
    const name = match ? decodeURIComponent(match[1]!).replaceAll("~1", "/").replaceAll("~0", "~") : null;
    return name !== null && name in defs ? name : null;
  };

  const ts = (s: Schema, indent: string): string => {
    if (s === true) return "unknown";
    if (s === false) return "never";
    if (s.$ref !== undefined) {
      const name = refName(s.$ref);
      return name === null ? "unknown" : defType(name);
    }
    if (s.const !== undefined) return isPrimitive(s.const) ? JSON.stringify(s.const) : "unknown";
    if (Array.isArray(s.enum)) return s.enum.every(isPrimitive) ? s.enum.map((v) => JSON.stringify(v)).join(" | ") || "never" : "unknown";
    const parts = (list: unknown) => (Array.isArray(list) ? list.filter((x): x is Schema => isObject(x) || typeof x === "boolean") : []);
    if (Array.isArray(s.anyOf) || Array.isArray(s.oneOf)) return parts(s.anyOf ?? s.oneOf).map((x) => `(${ts(x, indent)})`).join(" | ") || "never";
    if (Array.isArray(s.allOf)) return parts(s.allOf).map((x) => `(${ts(x, indent)})`).join(" & ") || "unknown";
    const types = Array.isArray(s.type) ? s.type : typeof s.type === "string" ? [s.type] : [];
    if (types.length === 0) return isObject(s.properties) ? objectTs(s, indent) : "unknown";
    return types.map((t) => typeTs(String(t), s, indent)).join(" | ");
  };
  const typeTs = (type: string, s: Record<string, unknown>, indent: string): string => {
    if (type === "string") return "string";
    if (type === "number" || type === "integer") return "number";
    if (type === "boolean") return "boolean";
    if (type === "null") return "null";
    if (type === "array") return `Array<${s.items === undefined ? "unknown" : ts(s.items as Schema, indent)}>`;
    if (type === "object") return objectTs(s, indent);
    return "unknown";
  };
  const objectTs = (s: Record<string, unknown>, indent: string): string => {
    const required = new Set(Array.isArray(s.required) ? s.required.map(String) : []);
    const inner = `${indent}  `;
    const lines = Object.entries(isObject(s.properties) ? s.properties : {}).map(
      ([name, p]) => `${inner}${key(name)}${required.has(name) ? "" : "?"}: ${ts(p as Schema, inner)};`,
    );
    const extra = s.additionalProperties;
    if (extra !== false) lines.push(`${inner}[key: string]: ${isObject(extra) && lines.length === 0 ? ts(extra, inner) : "unknown"};`);
    return lines.length === 0 ? "{}" : `{\n${lines.join("\n")}\n${indent}}`;
  };

  const zod = (s: Schema): string => {
    if (s === true) return "z.unknown()";
    if (s === false) return "z.never()";
    if (s.$ref !== undefined) {
      const name = refName(s.$ref);
      return name === null ? "z.unknown()" : defConst(name);
    }
    if (s.const !== undefined) return isPrimitive(s.const) ? `z.literal(${JSON.stringify(s.const)})` : "z.unknown()";
    if (Array.isArray(s.enum) && !s.enum.every(isPrimitive)) return "z.unknown()";
    if (Array.isArray(s.enum)) {
      const values = s.enum.map((v) => `z.literal(${JSON.stringify(v)})`);
      return values.length === 0 ? "z.never()" : values.length === 1 ? values[0]! : `z.union([${values.join(", ")}])`;
    }
    const parts = (list: unknown) => (Array.isArray(list) ? list.filter((x): x is Schema => isObject(x) || typeof x === "boolean") : []);
    const union = (list: string[]) => (list.length === 0 ? "z.never()" : list.length === 1 ? list[0]! : `z.union([${list.join(", ")}])`);
    if (Array.isArray(s.anyOf) || Array.isArray(s.oneOf)) return union(parts(s.anyOf ?? s.oneOf).map(zod));
    if (Array.isArray(s.allOf)) {
      const all = parts(s.allOf).map(zod);
      return all.length === 0 ? "z.unknown()" : all.reduce((a, b) => `z.intersection(${a}, ${b})`);
    }
    const types = Array.isArray(s.type) ? s.type : typeof s.type === "string" ? [s.type] : [];
    if (types.length === 0) return isObject(s.properties) ? objectZod(s) : "z.unknown()";
    return union(types.map((t) => typeZod(String(t), s)));
  };
  const bound = (s: Record<string, unknown>, min: string, max: string) =>
    (typeof s[min] === "number" ? `.min(${s[min]})` : "") + (typeof s[max] === "number" ? `.max(${s[max]})` : "");
  const typeZod = (type: string, s: Record<string, unknown>): string => {
    if (type === "string") return `z.string()${bound(s, "minLength", "maxLength")}`;
    if (type === "number") return `z.number()${bound(s, "minimum", "maximum")}`;
    if (type === "integer") return `z.number().int()${bound(s, "minimum", "maximum")}`;
    if (type === "boolean") return "z.boolean()";
    if (type === "null") return "z.null()";
    if (type === "array") return `z.array(${s.items === undefined ? "z.unknown()" : zod(s.items as Schema)})${bound(s, "minItems", "maxItems")}`;
    if (type === "object") return objectZod(s);
    return "z.unknown()";
  };
  const objectZod = (s: Record<string, unknown>): string => {
    const required = new Set(Array.isArray(s.required) ? s.required.map(String) : []);
    const fields = Object.entries(isObject(s.properties) ? s.properties : {}).map(([name, p]) => `${key(name)}: ${zod(p as Schema)}${required.has(name) ? "" : ".optional()"}`);
    const shape = `{ ${fields.join(", ")} }`;
    const extra = s.additionalProperties;
    if (extra === false) return `z.strictObject(${shape})`;
    if (isObject(extra) && fields.length === 0) return `z.record(z.string(), ${zod(extra)})`;
    return `z.looseObject(${shape})`;
  };

  const defNames = Object.keys(defs);
  const types = [
    ...defNames.map((name) => `export type ${defType(name)} = ${ts(defs[name] as Schema, "")};`),
    `export type ${typeName} = ${ts(schema, "")};`,
  ].join("\n");
  // Definitions are lazy: they may refer to each other, and to themselves, in any order.
  const zodLines = [
    ...defNames.map((name) => `export const ${defConst(name)}: z.ZodType<${defType(name)}> = z.lazy(() => ${zod(defs[name] as Schema)});`),
    `export const ${constName}: z.ZodType<${typeName}> = ${zod(schema)};`,
  ].join("\n");
  return { types, zod: zodLines };
}
