// Callers' JSON Schemas compiled and run with ajv, set up as genserve's validator: in the schema
// workers (validate-worker.mjs) and, for small schemas without references, on the event loop
// (validator.ts). Plain JavaScript so that Node loads it as it is, from the package, under both the
// CLI and the Next.js server bundle, and in worker threads.
import Ajv from "ajv";
import Ajv2019 from "ajv/dist/2019.js";
import Ajv2020 from "ajv/dist/2020.js";
import AjvDraft04 from "ajv-draft-04";
import addFormats from "ajv-formats";
import { createRequire } from "node:module";
import { schemaRegExp } from "../regex/pattern-engine.mjs";
import { jsonEqual } from "../json/json-equal.mjs";

const require = createRequire(import.meta.url);
// Ajv's `enum`, `const` and `uniqueItems` call the function this module exports, as it is when a
// schema is compiled: replace it before any compile with one that cannot throw on JSON (see lib/json/json-equal.mjs).
const ajvEqual = require("ajv/dist/runtime/equal");
ajvEqual.default = Object.assign(jsonEqual, { code: ajvEqual.default.code });
const draft06 = require("ajv/dist/refs/json-schema-draft-06.json");

const OPTIONS = {
  // Callers' schemas carry annotations of every kind ("example", "x-..."): strict mode would refuse them.
  strict: false,
  allErrors: true,
  validateFormats: true,
  logger: false,
  // Instances are parsed JSON: only their own keys exist. Without this, `required: ["toString"]`
  // is met by Object.prototype.toString.
  ownProperties: true,
  // Required keys checked in a loop: ajv's inline check never reports a missing "" key where it
  // stops at the first error, inside `not` or `if` (ajv-validator/ajv#2077, open).
  loopRequired: 0,
  // Unoptimised code generation compiles about twice as fast; validation of model outputs is cheap either way.
  // Patterns run on RE2 (linear time); the few it cannot run passed a ReDoS analysis first.
  code: { optimize: false, regExp: Object.assign(schemaRegExp, { code: "schemaRegExp" }) },
};

const instances = new Map();
function ajvFor(draft) {
  let ajv = instances.get(draft);
  if (ajv) return ajv;
  ajv = newAjv(draft);
  instances.set(draft, ajv);
  return ajv;
}

function newAjv(draft) {
  let ajv;
  if (draft === "draft-04") ajv = new AjvDraft04(OPTIONS);
  else if (draft === "2019-09") ajv = new Ajv2019(OPTIONS);
  else if (draft === "2020-12") ajv = new Ajv2020(OPTIONS);
  else {
    ajv = new Ajv(OPTIONS);
    if (draft === "draft-06") ajv.addMetaSchema(draft06);
  }
  // `id` names a schema only in draft-04; in later drafts it is an unknown keyword, ignored (as the
  // specification and mainstream validators have it) rather than refused as ajv does. Real schemas
  // written against draft-04 habits and declared 07 or 2020-12 carry it often.
  if (draft !== "draft-04") ajv.removeKeyword("id");
  addFormats(ajv);
  return ajv;
}

/** Whether a schema names resources (`$id`, or `id` in draft-04) anywhere. */
function declaresIds(node, draft, depth = 0) {
  if (node === null || typeof node !== "object" || depth > 64) return false;
  if (Array.isArray(node)) return node.some((n) => declaresIds(n, draft, depth + 1));
  if (typeof node.$id === "string" || (draft === "draft-04" && typeof node.id === "string")) return true;
  return Object.values(node).some((v) => declaresIds(v, draft, depth + 1));
}


const plainErrors = (errors) =>
  (errors ?? []).map((e) => ({ instancePath: e.instancePath, keyword: e.keyword, params: e.params, message: e.message }));

const withoutHash = (uri) => (typeof uri === "string" ? uri.replace(/#$/, "") : uri);

function compileInto(compiled, capacity, { key, draft, schema: given }) {
  // A root id equal to the schema's own $schema (copied from a meta-schema) would clash with the
  // meta-schema itself; with only local references allowed, dropping it changes nothing else.
  const idKey = draft === "draft-04" ? "id" : "$id";
  const schema =
    typeof given[idKey] === "string" && withoutHash(given[idKey]) === withoutHash(given.$schema) ? { ...given, [idKey]: undefined } : given;
  if (schema !== given) delete schema[idKey];
  // Ajv registers every $id it compiles: in the shared instance, a caller's schema that reuses a
  // meta-schema's id (or another caller's) would replace or collide with it for everyone after. Such
  // schemas get an instance of their own, which lives as long as their validator.
  const ajv = declaresIds(schema, draft) ? newAjv(draft) : ajvFor(draft);
  if (!ajv.validateSchema(schema)) return { ok: false, meta: plainErrors(ajv.errors) };
  try {
    const validate = ajv.compile(schema);
    compiled.set(key, validate);
    if (compiled.size > capacity) compiled.delete(compiled.keys().next().value);
    return { ok: true };
  } catch (error) {
    return { ok: false, compile: String(error?.message ?? error) };
  } finally {
    // Ajv caches by object identity; every schema here is a fresh copy, so drop it from Ajv's cache.
    ajv.removeSchema(schema);
  }
}

function validateWith(compiled, capacity, { key, value, draft, schema }) {
  let fn = compiled.get(key);
  if (!fn && schema) {
    // Not compiled here yet (another worker of the pool did): do it now.
    if (!compileInto(compiled, capacity, { key, draft, schema }).ok) return { compileFailed: true };
    fn = compiled.get(key);
  }
  if (!fn) return { missing: true };
  compiled.delete(key);
  compiled.set(key, fn);
  let valid;
  try {
    valid = fn(value);
  } catch (error) {
    // Ajv's generated code can itself throw on some schemas, e.g. {"allOf":[{"anyOf":[{"additionalProperties":false}]}],
    // "patternProperties":{"a":{}}} on {"abcdef":1} with allErrors. A value that could not be checked is
    // not valid: the run retries, and never returns an unchecked object.
    const message = `could not be checked: the validator failed on this value (${String(error?.message ?? error).slice(0, 200)})`;
    return { valid: false, errors: [{ instancePath: "", keyword: "validator", params: {}, message }] };
  }
  return valid ? { valid: true } : { valid: false, errors: plainErrors(fn.errors) };
}

/**
 * A bounded set of compiled validators by key (least recently used evicted past `capacity`):
 * `compile` checks a schema against its meta-schema and compiles it; `validate` runs one, compiling
 * it first when the message carries the schema.
 */
export function createValidators(capacity = 500) {
  const compiled = new Map();
  const set = { capacity };
  return {
    configure(size) {
      set.capacity = size;
    },
    compile: (message) => compileInto(compiled, set.capacity, message),
    validate: (message) => validateWith(compiled, set.capacity, message),
    has: (key) => compiled.has(key),
  };
}
