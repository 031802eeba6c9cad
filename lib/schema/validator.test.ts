import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { DEFAULT_LIMITS } from "../config/load";
import { isGenserveError } from "../errors";
import { detectDraft } from "./inspect";
import { SchemaCompiler } from "./validator";

const workerFile = fileURLToPath(new URL("./validate-worker.mjs", import.meta.url));
const compilers: SchemaCompiler[] = [];
const compiler = () => {
  const c = new SchemaCompiler({ ...DEFAULT_LIMITS, validatorCache: 3 }, { workerFile });
  compilers.push(c);
  return c;
};
afterAll(async () => Promise.all(compilers.map((c) => c.close())));

describe("SchemaCompiler", () => {
  it("runs patterns on RE2: one that backtracks 2^n on JavaScript's engine validates a hostile value at once", async () => {
    const prepared = await compiler().prepare({ type: "object", properties: { s: { type: "string", pattern: "^(a|a)*$" } } });
    expect(await prepared.validate({ s: "a".repeat(30) })).toEqual({ valid: true });
    // On JavaScript's engine this takes minutes; the default validation time limit is 1 s.
    const result = await prepared.validate({ s: `${"a".repeat(60)}!` });
    expect(result).toMatchObject({ valid: false, errors: [{ path: "/s", message: expect.stringMatching(/must match pattern/) }] });
  });

  it("tolerates a draft-04 `id` in a schema of a later draft, and `definitions` in 2020-12, as mainstream validators do", async () => {
    const c = compiler();
    for (const $schema of ["http://json-schema.org/draft-07/schema#", "https://json-schema.org/draft/2019-09/schema", "https://json-schema.org/draft/2020-12/schema"]) {
      const prepared = await c.prepare({
        $schema,
        id: "https://example.com/order.json",
        type: "object",
        properties: { a: { id: "#a", type: "string" }, b: { $ref: "#/definitions/count" } },
        definitions: { count: { type: "integer" } },
      });
      expect(await prepared.validate({ a: "x", b: 1 })).toEqual({ valid: true });
      expect((await prepared.validate({ a: 1, b: "s" })).valid).toBe(false);
      // Tolerated, and said: the run records these warnings.
      const draft = detectDraft({ $schema })!;
      expect(prepared.warnings).toEqual([
        `The schema is ${draft} but uses draft-04's "id" (at /schema/id and 1 more place); it was ignored as an unknown keyword. Use "$id" to name a schema.`,
        ...(draft === "draft-07" ? [] : [`The schema is ${draft} but keeps subschemas in "definitions" (at /schema/definitions), the name before 2019-09; they were used as "$defs".`]),
      ]);
    }
    // A draft-04 schema's `id` is its own; `definitions` without "$schema" is the common spelling.
    expect((await c.prepare({ $schema: "http://json-schema.org/draft-04/schema#", id: "x", type: "object" })).warnings).toEqual([]);
    expect((await c.prepare({ type: "object", properties: { b: { $ref: "#/definitions/n" } }, definitions: { n: { type: "integer" } } })).warnings).toEqual([]);
    // A property named "id" is a name, not the keyword.
    expect((await c.prepare({ $schema: "https://json-schema.org/draft/2020-12/schema", type: "object", properties: { id: { type: "string" } } })).warnings).toEqual([]);
  });

  it("lets a pattern RE2 cannot run through only when a ReDoS analysis finds it safe, and says why it refuses one", async () => {
    const c = compiler();
    const safe = await c.prepare({ type: "object", properties: { pair: { type: "string", pattern: "^(\\w+)-\\1$" } } });
    expect(await safe.validate({ pair: "ab-ab" })).toEqual({ valid: true });
    expect((await safe.validate({ pair: "ab-cd" })).valid).toBe(false);
    const error = await c.prepare({ type: "object", properties: { s: { type: "string", pattern: "^(a|a)*(?!b)$" } } }).catch((e: unknown) => e);
    expect(isGenserveError(error) && error.errors).toEqual([
      {
        path: "/schema/properties/s/pattern",
        message: expect.stringMatching(/^the lookahead \(\?!b\) at offset 7 needs a backtracking engine, and on that engine it can backtrack in exponential time/),
      },
    ]);
  });

  it("keeps callers' $id out of the shared instance: reusing a meta-schema's or another schema's id breaks nothing", async () => {
    const c = compiler();
    const draft06 = "http://json-schema.org/draft-06/schema#";
    // Found by bench:schemas on JSONSchemaBench: this schema used to remove draft-06 for every later request.
    const hijack = await c.prepare({ $schema: draft06, $id: draft06, type: "object", properties: { foo: {} }, required: ["foo"] });
    expect((await hijack.validate({})).valid).toBe(false);
    const later = await c.prepare({ $schema: draft06, type: "object", properties: { n: { type: "integer" } } });
    expect(await later.validate({ n: 1 })).toEqual({ valid: true });
    // Two different schemas with one $id both compile.
    const a = await c.prepare({ $id: "https://example.com/s", type: "object", required: ["a"] });
    const b = await c.prepare({ $id: "https://example.com/s", type: "object", required: ["b"] });
    expect((await a.validate({ a: 1 })).valid).toBe(true);
    expect((await b.validate({ a: 1 })).valid).toBe(false);
  });

  it("validates outputs and reports JSON Pointers", async () => {
    const prepared = await compiler().prepare({
      type: "object",
      properties: { name: { type: "string", minLength: 1 }, tags: { type: "array", items: { enum: ["a", "b"] } }, email: { type: "string", format: "email" } },
      required: ["name"],
      additionalProperties: false,
    });
    expect(await prepared.validate({ name: "x", tags: ["a"], email: "a@b.co" })).toEqual({ valid: true });
    const result = await prepared.validate({ tags: ["c"], email: "nope", extra: 1 });
    expect(result.valid).toBe(false);
    if (!result.valid) {
      expect(result.errors).toEqual(
        expect.arrayContaining([
          { path: "/", message: 'must have required property "name"' },
          { path: "/", message: 'must not have additional property "extra"' },
          { path: "/tags/0", message: 'must be one of ["a","b"]' },
          { path: "/email", message: 'must match format "email"' },
        ]),
      );
    }
  });

  it("counts only an object's own keys: Object's members do not meet `required`", async () => {
    const prepared = await compiler().prepare({ type: "object", required: ["toString", "constructor", "__proto__"] });
    expect(await prepared.validate({})).toMatchObject({ valid: false, errors: [{ message: 'must have required property "toString"' }, {}, {}] });
    expect(await prepared.validate(JSON.parse('{"toString": 1, "constructor": 2, "__proto__": 3}'))).toEqual({ valid: true });
  });

  it("validates a hot small schema on the event loop, with the workers' verdicts; recursive or fanning-out references stay in the workers", async () => {
    const c = compiler();
    const small = await c.prepare({ type: "object", properties: { n: { $ref: "#/$defs/n" }, s: { type: "string", pattern: "^a+$" } }, required: ["n"], $defs: { n: { type: "integer", minimum: 1 } } });
    const recursive = await c.prepare({ type: "object", properties: { n: { type: "integer" }, kids: { type: "array", items: { $ref: "#" } } } });
    // Each level refers to the next twice: 2^12 subschemas written out, from a few hundred bytes.
    const $defs = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`d${i}`, i === 11 ? { type: "integer" } : { anyOf: [{ $ref: `#/$defs/d${i + 1}` }, { $ref: `#/$defs/d${i + 1}` }] }]));
    const fanning = await c.prepare({ type: "object", properties: { n: { $ref: "#/$defs/d0" } }, $defs });
    const bad = { n: 0, s: "b" };
    const fromWorker = await small.validate(bad);
    expect(fromWorker).toMatchObject({ valid: false });
    for (let i = 0; i < 3; i++) {
      for (const prepared of [small, recursive, fanning]) expect(await prepared.validate({ n: 2 })).toEqual({ valid: true });
    }
    await c.close(); // no workers from here on
    expect(await small.validate({ n: 3, s: "aa" })).toEqual({ valid: true });
    expect(await small.validate(bad)).toEqual(fromWorker);
    await expect(recursive.validate({ n: 2 })).rejects.toThrow();
    await expect(fanning.validate({ n: 2 })).rejects.toThrow();
  });

  it('checks a required "" key everywhere, inside `not` too (ajv#2077 skips it there by default)', async () => {
    const prepared = await compiler().prepare({ type: "object", properties: { a: { not: { type: "object", required: [""] } } } });
    expect(await prepared.validate({ a: { b: 1 } })).toEqual({ valid: true });
    expect(await prepared.validate({ a: { "": 1 } })).toMatchObject({ valid: false });
  });

  it("validates enum, const and uniqueItems on objects with valueOf or toString keys (ajv#2624 would throw)", async () => {
    const c = compiler();
    const enumOf = await c.prepare({ type: "object", properties: { a: { enum: [{}, { valueOf: 0 }] } } });
    expect(await enumOf.validate({ a: {} })).toEqual({ valid: true });
    expect(await enumOf.validate({ a: { valueOf: 0 } })).toEqual({ valid: true });
    expect(await enumOf.validate({ a: { toString: "" } })).toMatchObject({ valid: false, errors: [{ path: "/a" }] });
    const unique = await c.prepare({ type: "array", uniqueItems: true });
    expect(await unique.validate([{}, { toString: "" }])).toEqual({ valid: true });
    expect(await unique.validate([{ valueOf: 1 }, { valueOf: 1 }])).toMatchObject({ valid: false });
    const constant = await c.prepare({ type: "object", properties: { a: { const: { toString: null } } } });
    expect(await constant.validate({ a: { toString: null } })).toEqual({ valid: true });
    expect(await constant.validate({ a: {} })).toMatchObject({ valid: false });
  });

  it("reports a value the validator itself fails on as not valid, naming why (an ajv bug found by the grammar fuzzer)", async () => {
    const prepared = await compiler().prepare({ type: "object", allOf: [{ anyOf: [{ additionalProperties: false }] }], patternProperties: { a: {} } });
    expect(await prepared.validate({})).toEqual({ valid: true });
    expect(await prepared.validate({ abcdef: 1 })).toMatchObject({ valid: false, errors: [{ path: "/", message: expect.stringContaining("could not be checked") }] });
  });

  it("compiles once per schema content, whatever the key order, in a bounded cache", async () => {
    const c = compiler();
    const a = await c.prepare({ type: "object", properties: { x: { type: "string" } } });
    const b = await c.prepare({ properties: { x: { type: "string" } }, type: "object" });
    expect(b).toBe(a);
    for (let i = 0; i < 10; i++) await c.prepare({ type: "object", title: `t${i}` });
    expect(c.size).toBe(3);
  });

  it("compiles schemas that reuse the same $id (nothing is left registered in Ajv)", async () => {
    const c = compiler();
    const one = await c.prepare({ $id: "https://example.com/s", type: "object", properties: { a: { type: "string" } } });
    const two = await c.prepare({ $id: "https://example.com/s", type: "object", properties: { a: { type: "integer" } } });
    expect((await one.validate({ a: "x" })).valid).toBe(true);
    expect((await two.validate({ a: "x" })).valid).toBe(false);
  });

  it("handles recursion through $defs", async () => {
    const tree = await compiler().prepare({
      type: "object",
      $ref: "#/$defs/node",
      $defs: { node: { type: "object", properties: { value: { type: "integer" }, children: { type: "array", items: { $ref: "#/$defs/node" } } }, required: ["value"] } },
    });
    expect((await tree.validate({ value: 1, children: [{ value: 2, children: [{ value: 3 }] }] })).valid).toBe(true);
    expect((await tree.validate({ value: 1, children: [{ children: [] }] })).valid).toBe(false);
  });

  it("throws a 400 listing every problem", async () => {
    try {
      await compiler().prepare({ type: "number", properties: { a: { $ref: "http://x/y" } } });
      throw new Error("expected an error");
    } catch (error) {
      expect(isGenserveError(error) && error.code).toBe("validation_failed");
      expect(isGenserveError(error) && error.errors?.map((e) => e.path)).toEqual(["/schema/properties/a/$ref", "/schema/type"]);
    }
  });

  it("compiles off the event loop: timers keep firing while a large schema compiles", async () => {
    const properties = Object.fromEntries(Array.from({ length: 800 }, (_, i) => [`p${i}`, { type: "string", pattern: "^[a-z]{1,8}$", format: "email" }]));
    let ticks = 0;
    const timer = setInterval(() => ticks++, 2);
    try {
      const prepared = await compiler().prepare({ type: "object", properties, required: Object.keys(properties) });
      expect((await prepared.validate({})).valid).toBe(false);
    } finally {
      clearInterval(timer);
    }
    // Compiling this schema on the event loop takes 100+ ms with no timer firing at all.
    expect(ticks).toBeGreaterThanOrEqual(5);
  });

  it("detects drafts from $schema or the forms used", () => {
    expect(detectDraft({ $schema: "http://json-schema.org/draft-04/schema#" })).toBe("draft-04");
    expect(detectDraft({ $schema: "http://json-schema.org/draft-07/schema#" })).toBe("draft-07");
    expect(detectDraft({ $schema: "https://json-schema.org/draft/2020-12/schema" })).toBe("2020-12");
    expect(detectDraft({ type: "array", items: [{ type: "string" }] })).toBe("draft-07");
    expect(detectDraft({ type: "array", prefixItems: [{ type: "string" }] })).toBe("2020-12");
    expect(detectDraft({ $schema: "https://example.com/custom" })).toBeNull();
  });

  it("accepts draft-04 schemas (exclusiveMinimum as a boolean)", async () => {
    const prepared = await compiler().prepare({ $schema: "http://json-schema.org/draft-04/schema#", type: "object", properties: { n: { type: "number", minimum: 0, exclusiveMinimum: true } } });
    expect((await prepared.validate({ n: 0 })).valid).toBe(false);
    expect((await prepared.validate({ n: 1 })).valid).toBe(true);
  });
});

describe("SchemaCompiler, repeated preparation", () => {
  it("prepares the same schema object once (screening and hashing are not repeated)", async () => {
    const c = compiler();
    const schema = { type: "object", properties: { a: { type: "string" } } };
    const first = await c.prepare(schema);
    // Mutating the object afterwards does not matter: requests do not change their schema.
    schema.properties.a.type = "not a type";
    expect(await c.prepare(schema)).toBe(first);
    // A different object with the same content is screened again (and so refused here).
    await expect(c.prepare(structuredClone(schema))).rejects.toMatchObject({ code: "validation_failed" });
  });
});
