/**
 * What a caller may pass as `schema`: a JSON Schema object, a zod 4 schema, or any Standard Schema
 * that can describe itself as JSON Schema (Standard JSON Schema, `~standard.jsonSchema`); and the
 * TypeScript type of the object it describes. The client never imports a schema library: it reads
 * the standard interface the library implements. Browser-safe.
 */

/** A JSON Schema object, as the API takes it. */
export type JsonSchema = Record<string, unknown>;

/** The part of the Standard Schema interface (standardschema.dev) the client reads. */
export interface StandardSchemaLike<Output = unknown> {
  readonly "~standard": {
    readonly version: 1;
    readonly vendor: string;
    readonly types?: { readonly input: unknown; readonly output: Output } | undefined;
    readonly validate?: (value: unknown) => StandardResult<Output> | Promise<StandardResult<Output>>;
    /** Standard JSON Schema: zod 4.2 and later, arktype, valibot (through its converter)… */
    readonly jsonSchema?: { readonly output: (options: { target: string }) => Record<string, unknown> };
  };
}

type StandardResult<Output> = { readonly value: Output; readonly issues?: undefined } | { readonly issues: ReadonlyArray<{ readonly message: string; readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> }> };

const TYPED = "~genserveType";

/** A JSON Schema with the type of the objects it describes, made by `jsonSchema<T>()`. */
export interface TypedJsonSchema<T> {
  readonly [TYPED]: true;
  readonly jsonSchema: JsonSchema;
  /** Never set: carries `T` for inference. */
  readonly __type?: T;
}

/** Anything `schema` accepts. */
export type SchemaInput = JsonSchema | StandardSchemaLike | TypedJsonSchema<unknown>;

/**
 * Names the type of a plain JSON Schema's objects, so results are typed without a schema library.
 *
 * @example
 * ```ts
 * const invoice = jsonSchema<{ number: string; total: number }>({
 *   type: "object",
 *   properties: { number: { type: "string" }, total: { type: "number" } },
 *   required: ["number", "total"],
 * });
 * const { object } = await client.generateObject({ workflow: "extract-invoice", input, schema: invoice, callback });
 * object.total; // number
 * ```
 */
export function jsonSchema<T>(schema: JsonSchema): TypedJsonSchema<T> {
  return { [TYPED]: true, jsonSchema: schema };
}

/** The object type a schema describes: from zod or a Standard Schema, from `jsonSchema<T>()`, else `unknown`. */
export type InferObject<S> = S extends TypedJsonSchema<infer T>
  ? T
  : S extends { readonly "~standard": { readonly types?: infer Types } }
    ? NonNullable<Types> extends { readonly output: infer O }
      ? O
      : unknown
    : unknown;

/** What a streamed object may be so far: every property optional, all the way down. */
export type DeepPartial<T> = T extends readonly (infer E)[]
  ? DeepPartial<E>[]
  : T extends Date | RegExp
    ? T
    : T extends object
      ? { [K in keyof T]?: DeepPartial<T[K]> }
      : T;

const isStandard = (value: unknown): value is StandardSchemaLike => value !== null && typeof value === "object" && "~standard" in value;
const isTyped = (value: unknown): value is TypedJsonSchema<unknown> => value !== null && typeof value === "object" && TYPED in value;

/** The JSON Schema to send for `schema` (undefined: the workflow's default schema). */
export function toJsonSchema(schema: SchemaInput | undefined): JsonSchema | undefined {
  if (schema === undefined) return undefined;
  if (isTyped(schema)) return schema.jsonSchema;
  if (!isStandard(schema)) return schema;
  const converter = schema["~standard"].jsonSchema;
  if (converter) {
    const out = { ...converter.output({ target: "draft-2020-12" }) };
    // The service reads `$schema` to pick a draft; the converter's dialect URI is noise to it.
    delete out.$schema;
    return out;
  }
  // zod 4 before Standard JSON Schema: its schemas convert themselves.
  const own = (schema as { toJSONSchema?: () => JsonSchema }).toJSONSchema;
  if (typeof own === "function") return own.call(schema);
  throw new TypeError(`A ${schema["~standard"].vendor} schema that cannot produce JSON Schema: pass a JSON Schema object instead.`);
}

/**
 * Checks a finished object with the caller's Standard Schema (the server already validated it
 * against the JSON Schema; this applies what JSON Schema cannot say, such as transforms), and
 * returns the schema's output. Plain JSON Schemas pass the object through.
 */
export async function parseWithSchema<T>(schema: SchemaInput | undefined, value: unknown): Promise<{ value: T } | { issues: { path: string; message: string }[] }> {
  const validate = isStandard(schema) ? schema["~standard"].validate : undefined;
  if (!validate) return { value: value as T };
  const result = await validate(value);
  if (!result.issues) return { value: result.value as T };
  const pointer = (path: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined) =>
    (path ?? []).map((p) => `/${String(typeof p === "object" ? p.key : p).replace(/~/g, "~0").replace(/\//g, "~1")}`).join("");
  return { issues: result.issues.map((issue) => ({ path: pointer(issue.path), message: issue.message })) };
}
