import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createGrammarChecker, type GrammarChecker } from "../../test/helpers/grammar-check";
import { compileGrammar, UnsatisfiableSchemaError } from "./compile";

// Each case: a schema, instances the grammar must accept, instances it must refuse. Every instance's
// validity is first confirmed by ajv, so a case cannot silently test the wrong thing. Acceptance is
// decided by llama.cpp's own grammar engine, not by reading the GBNF text.
/**
 * `accept`: valid, and the grammar allows it; `reject`: invalid, and the grammar refuses it;
 * `narrowed`: valid, but outside the sound subset the grammar writes (it refuses it).
 */
type Case = { name: string; schema: Record<string, unknown>; accept: string[]; reject: string[]; narrowed?: string[]; exact?: boolean };

const CASES: Case[] = [
  { name: "type string", schema: { type: "string" }, accept: ['"hi"', '""', '"a\\"b"', '"é"'], reject: ["1", "null", '"a'] },
  { name: "type integer", schema: { type: "integer" }, accept: ["0", "-12", "345"], reject: ["1.5", '"1"', "01"] },
  { name: "type number", schema: { type: "number" }, accept: ["0", "-1.25", "3e5"], reject: ['"1"', "true"] },
  { name: "type boolean / null", schema: { type: ["boolean", "null"] }, accept: ["true", "false", "null"], reject: ["0", '"true"'] },
  {
    name: "properties, required, optional really optional",
    schema: { type: "object", properties: { a: { type: "string" }, b: { type: "integer" }, c: { type: "boolean" } }, required: ["b"] },
    accept: ['{"b":1}', '{"a":"x","b":1}', '{"b":1,"c":true}', '{"a":"x", "b":1, "c":false}'],
    reject: ['{"a":"x"}', "{}", '{"b":"1"}'],
  },
  {
    name: "all properties optional",
    schema: { type: "object", properties: { a: { type: "string" }, b: { type: "integer" } } },
    accept: ["{}", '{"a":"x"}', '{"b":2}', '{"a":"x","b":2}'],
    reject: ['{"b":"x"}', "[]"],
  },
  {
    name: "additionalProperties false",
    schema: { type: "object", properties: { a: { type: "integer" } }, additionalProperties: false },
    accept: ['{"a":1}', "{}"],
    reject: ['{"a":1,"z":2}', '{"z":2}'],
  },
  {
    name: "additionalProperties schema (a map)",
    schema: { type: "object", additionalProperties: { type: "integer" } },
    accept: ["{}", '{"x":1}', '{"x":1, "y":-2}'],
    reject: ['{"x":"1"}', '{"x":1,}'],
  },
  {
    name: "items, minItems, maxItems",
    schema: { type: "array", items: { type: "integer" }, minItems: 1, maxItems: 3 },
    accept: ["[1]", "[1, 2, 3]"],
    reject: ["[]", "[1,2,3,4]", '["a"]'],
  },
  {
    name: "prefixItems (tuple)",
    schema: { type: "array", prefixItems: [{ type: "string" }, { type: "integer" }], items: false },
    accept: ['["a",1]'],
    reject: ['[1,"a"]', '["a",1,2]'],
  },
  { name: "enum", schema: { enum: ["red", "green", 3, null] }, accept: ['"red"', "3", "null"], reject: ['"blue"', "4"] },
  { name: "const", schema: { const: { k: [1, 2] } }, accept: ['{"k":[1,2]}'], reject: ['{"k":[1]}'] },
  {
    name: "anyOf as alternatives",
    schema: { anyOf: [{ type: "string", maxLength: 2 }, { type: "integer", minimum: 10 }] },
    accept: ['"ab"', "10", "999"],
    reject: ['"abc"', "9"],
  },
  {
    name: "oneOf with disjoint types",
    schema: { oneOf: [{ type: "boolean" }, { type: "object", properties: { x: { type: "integer" } }, required: ["x"] }] },
    accept: ["true", '{"x":1}'],
    reject: ["{}", "1"],
  },
  {
    name: "allOf of objects merged",
    schema: { allOf: [{ type: "object", properties: { a: { type: "string" } }, required: ["a"] }, { properties: { b: { type: "integer" } }, required: ["b"] }] },
    accept: ['{"a":"x","b":1}'],
    reject: ['{"a":"x"}', '{"b":1}'],
  },
  {
    name: "$ref and $defs",
    schema: { type: "object", properties: { p: { $ref: "#/$defs/point" } }, required: ["p"], $defs: { point: { type: "array", items: { type: "number" }, minItems: 2, maxItems: 2 } } },
    accept: ['{"p":[1,2.5]}'],
    reject: ['{"p":[1]}', '{"p":{}}'],
  },
  {
    name: "recursive $ref",
    schema: {
      $ref: "#/$defs/node",
      $defs: { node: { type: "object", properties: { v: { type: "integer" }, kids: { type: "array", items: { $ref: "#/$defs/node" }, maxItems: 2 } }, required: ["v"], additionalProperties: false } },
    },
    accept: ['{"v":1}', '{"v":1,"kids":[{"v":2,"kids":[{"v":3}]},{"v":4}]}'],
    reject: ['{"v":1,"kids":[{}]}', '{"v":1,"kids":[{"v":2},{"v":3},{"v":4}]}'],
  },
  { name: "minLength / maxLength", schema: { type: "string", minLength: 2, maxLength: 3 }, accept: ['"ab"', '"abc"', '"é€"'], reject: ['"a"', '"abcd"'] },
  { name: "format date", schema: { type: "string", format: "date" }, accept: ['"2024-02-28"', '"1999-12-31"'], reject: ['"2024-13-01"', '"2024-1-01"', '"2024-04-31"'] },
  { name: "format time", schema: { type: "string", format: "time" }, accept: ['"23:59:59Z"', '"08:00:00+02:00"'], reject: ['"24:00:00Z"', '"8:00"'] },
  { name: "format date-time", schema: { type: "string", format: "date-time" }, accept: ['"2024-05-06T07:08:09Z"', '"2024-05-06T07:08:09.123+01:00"'], reject: ['"2024-05-06T25:08:09Z"', '"2024-05-06"'] },
  { name: "format uuid", schema: { type: "string", format: "uuid" }, accept: ['"123e4567-e89b-42d3-a456-426614174000"'], reject: ['"123e4567e89b42d3a456426614174000"'] },
  { name: "format email", schema: { type: "string", format: "email" }, accept: ['"ada.lovelace@example.org"'], reject: ['"ada@"', '"ada example.org"'] },
  { name: "format uri", schema: { type: "string", format: "uri" }, accept: ['"https://example.com/a/b"'], reject: ['"example.com"', '"a b"'] },
  { name: "pattern, anchored", schema: { type: "string", pattern: "^[A-Z]{3}-\\d{2,4}$" }, accept: ['"ABC-12"', '"XYZ-1234"'], reject: ['"AB-12"', '"ABC-1"', '"abc-12"', '"ABC-12x"'] },
  { name: "pattern, alternation and groups", schema: { type: "string", pattern: "^(?:cat|dog)s?$" }, accept: ['"cat"', '"dogs"'], reject: ['"cow"', '"catss"'] },
  { name: "pattern, unanchored", schema: { type: "string", pattern: "ab+" }, accept: ['"xxabbb"', '"ab"'], reject: ['"a"', '"ba"'] },
  { name: "pattern with quote and backslash", schema: { type: "string", pattern: '^["\\\\]+$' }, accept: ['"\\"\\\\"'], reject: ['"a"'] },
  {
    name: "integer bounds",
    schema: { type: "integer", minimum: -90, maximum: 1234 },
    accept: ["-90", "-1", "0", "7", "99", "1000", "1234"],
    reject: ["-91", "1235", "5000", "-100"],
  },
  { name: "exclusive integer bounds", schema: { type: "integer", exclusiveMinimum: 0, exclusiveMaximum: 10 }, accept: ["1", "9"], reject: ["0", "10"] },
  { name: "number bounds", schema: { type: "number", minimum: 0, maximum: 1 }, accept: ["0", "0.5", "1"], reject: ["1.5", "-0.1", "2"] },
  { name: "number bounds with negatives", schema: { type: "number", minimum: -90, maximum: 90 }, accept: ["-90", "-45.5", "0", "89.99", "90"], reject: ["-90.5", "90.1", "100"] },
  {
    name: "fractional bounds, digit by digit",
    schema: { type: "number", minimum: 0.05, maximum: 99.99 },
    accept: ["0.05", "0.06", "0.5", "1", "12.345", "99", "99.99", "99.5"],
    reject: ["0.04", "0.049", "0", "99.991", "100", "-1"],
  },
  {
    name: "fractional exclusive bounds within one integer part",
    schema: { type: "number", exclusiveMinimum: 0.1, exclusiveMaximum: 0.2 },
    accept: ["0.11", "0.15", "0.19"],
    reject: ["0.1", "0.10", "0.2", "0.20", "0.25", "0"],
  },
  {
    name: "fractional bounds across zero",
    schema: { type: "number", minimum: -2.5, exclusiveMaximum: 0.5 },
    accept: ["-2.5", "-2", "-0.5", "0", "0.49", "0.4"],
    reject: ["-2.6", "-3", "0.5", "0.50", "1"],
  },
  {
    name: "a fractional lower bound only",
    schema: { type: "number", exclusiveMinimum: 1.5 },
    accept: ["1.51", "1.6", "2", "1000.25"],
    reject: ["1.5", "1.50", "1.4", "1", "-2"],
  },
  { name: "false property must be absent", schema: { type: "object", properties: { a: { type: "integer" }, b: false } }, accept: ['{"a":1}'], reject: ['{"b":1}'] },
  {
    name: "patternProperties as keys",
    schema: { type: "object", patternProperties: { "^x-[a-z]+$": { type: "integer" } }, additionalProperties: false },
    accept: ["{}", '{"x-a":1}', '{"x-ab":1,"x-cd":2}'],
    reject: ['{"y":1}', '{"x-a":"1"}'],
  },
  {
    name: "enum values filtered by the keywords beside it",
    schema: { type: "string", enum: ["a", "bb", "ccc", 4], maxLength: 2 },
    accept: ['"a"', '"bb"'],
    reject: ['"ccc"', "4"],
  },
  {
    name: "oneOf told apart by a const discriminator",
    schema: {
      oneOf: [
        { type: "object", properties: { kind: { const: "circle" }, r: { type: "number" } }, required: ["kind", "r"] },
        { type: "object", properties: { kind: { const: "square" }, side: { type: "number" } }, required: ["kind"] },
      ],
    },
    accept: ['{"kind":"circle","r":1}', '{"kind":"square"}', '{"kind":"square","side":2}'],
    reject: ['{"kind":"circle"}', '{"kind":"oval","r":1}'],
  },
  {
    name: "contradictory bounds admit no value: the property is never written (found by the grammar fuzzer)",
    schema: {
      type: "object",
      properties: { s: { type: "string", minLength: 4, maxLength: 2 }, a: { type: "array", minItems: 2, maxItems: 1 }, n: { type: "integer" } },
      additionalProperties: { type: "string", minLength: 3, maxLength: 1 },
    },
    accept: ["{}", '{"n":1}'],
    reject: ['{"s":"ab"}', '{"s":"abcd"}', '{"a":[1]}', '{"a":[1,2]}', '{"n":1,"x":"a"}'],
  },
  {
    name: "a format beside a one-class pattern with a length is left to validation (found by the grammar fuzzer)",
    schema: { type: "string", format: "duration", minLength: 1, pattern: "^\\w*$" },
    accept: ['"P1D"'],
    reject: ['""', '"P-1"'],
    exact: false,
  },
  {
    name: "allOf: one part's additionalProperties governs the keys only another part declares (found by the grammar fuzzer)",
    schema: {
      type: "object",
      properties: {
        none: { allOf: [{ type: "object", properties: { a: { type: "string" } } }, { type: "object", properties: { b: { type: "integer" } }, additionalProperties: false }] },
        typed: { allOf: [{ type: "object", properties: { a: { type: "string" } } }, { type: "object", additionalProperties: { type: "string", maxLength: 2 } }] },
      },
      additionalProperties: false,
    },
    accept: ['{"none":{"b":1}}', '{"typed":{"a":"xy"}}', '{"none":{}}'],
    reject: ['{"none":{"a":"x"}}', '{"typed":{"a":"xyz"}}', '{"typed":{"c":1}}'],
  },
  {
    name: "allOf: one part's items govern the positions another part's prefixItems describe (found by the grammar fuzzer)",
    schema: { type: "array", allOf: [{ prefixItems: [{ type: ["integer", "null"] }, true], items: { type: "integer" } }, { items: { type: ["integer", "string"] } }] },
    accept: ["[1,2]", "[1,2,3]", '[1,"x"]'],
    reject: ["[null,1]", "[1,null]", '[1,"x","y"]'],
  },
  {
    name: "minProperties that no key can meet admits no object (found by the grammar fuzzer)",
    schema: {
      type: "object",
      properties: { m: { type: "object", additionalProperties: { type: "integer", minimum: 2, maximum: 1 }, minProperties: 1 }, r: { type: "object", minProperties: 3, maxProperties: 2 }, n: { type: "null" } },
    },
    accept: ["{}", '{"n":null}'],
    reject: ['{"m":{}}', '{"r":{}}', '{"r":{"a":1,"b":2}}'],
  },
  {
    name: "format url: labels without a double hyphen, as ajv-formats wants (found by the grammar fuzzer)",
    schema: { type: "string", format: "url" },
    accept: ['"https://a-b.example.com/x"'],
    reject: ['"https://a--b.example.com"', '"ftp:/x"'],
  },
  {
    name: "required keys named like Object members are written",
    schema: { type: "object", properties: { a: { type: "integer" } }, required: ["toString", "__proto__"], additionalProperties: { type: "integer" } },
    accept: ['{"toString":1,"__proto__":2}', '{"a":0,"toString":1,"__proto__":2}'],
    reject: ["{}", '{"toString":1}', '{"__proto__":2}'],
  },
  {
    name: "oneOf whose discriminator is named like an Object member",
    schema: {
      oneOf: [
        { type: "object", properties: { constructor: { const: "a" }, toString: { type: "string" } }, required: ["toString", "constructor"] },
        { type: "object", properties: { constructor: { const: "b" } }, required: ["constructor"] },
      ],
    },
    accept: ['{"constructor":"a","toString":"x"}', '{"constructor":"b"}'],
    reject: ['{"constructor":"a"}', '{"constructor":"c"}', '{"toString":"x"}'],
  },
  { name: "formats the validator does not know constrain nothing", schema: { type: "string", format: "topic" }, accept: ['"anything"'], reject: ["1"] },
  { name: "long maxLength, beyond one llama.cpp repetition", schema: { type: "string", minLength: 2100, maxLength: 4500 }, accept: [JSON.stringify("x".repeat(2100)), JSON.stringify("y".repeat(4500))], reject: [JSON.stringify("x".repeat(2099)), JSON.stringify("y".repeat(4501))] },
  { name: "minLength at a chunk boundary", schema: { type: "string", minLength: 2000, maxLength: 4001 }, accept: [JSON.stringify("x".repeat(2000)), JSON.stringify("y".repeat(4001))], reject: [JSON.stringify("x".repeat(1999)), JSON.stringify("y".repeat(4002))] },
  {
    name: "a maxLength past 16,000 is written as 16,000 (a sound subset)",
    schema: { type: "string", minLength: 3, maxLength: 65535 },
    accept: [JSON.stringify("x".repeat(3)), JSON.stringify("y".repeat(16000))],
    reject: [JSON.stringify("x".repeat(2))],
    narrowed: [JSON.stringify("y".repeat(16001))],
  },
  { name: "a minLength past 16,000 is left to validation", schema: { type: "string", minLength: 20000 }, accept: [JSON.stringify("x".repeat(20000))], reject: [JSON.stringify("x".repeat(1999))], exact: false },
  {
    name: "pattern with length: one repetition takes the length (exact)",
    schema: { type: "string", pattern: "^[a-z][a-z0-9_]*$", minLength: 3, maxLength: 5 },
    accept: ['"ab1"', '"abcde"', '"a_0_b"'],
    reject: ['"ab"', '"abcdef"', '"1ab"', '"Abc"'],
  },
  {
    name: "pattern with length: an unanchored end shares the length (a sound subset)",
    schema: { type: "string", pattern: "^https?://", maxLength: 12 },
    accept: ['"http://a.io"', '"https://a.io"', '"https://"'],
    reject: ['"https://ab.io"', '"ftp://x"', '"http:/"'],
    narrowed: ['"http://ab.io"'],
  },
  {
    name: "pattern with length: each alternative counted, those that cannot fit dropped",
    schema: { type: "object", properties: { s: { type: "string", pattern: "^(abc|d+|e{5})$", maxLength: 3 }, t: { type: "string", pattern: "^a[0-9]{5}$", maxLength: 3 } } },
    accept: ['{"s":"abc"}', '{"s":"ddd"}', '{"s":"d"}', "{}"],
    reject: ['{"s":"dddd"}', '{"s":"eeeee"}', '{"t":"a12345"}', '{"t":"a1"}'],
  },
  {
    name: "pattern with length: optional groups counted too",
    schema: { type: "object", properties: { a: { type: "string", pattern: "^([a-z][a-z0-9-]*)?$", maxLength: 4 }, b: { type: "string", pattern: "^([a-z]+):([a-z]+)?:x$", minLength: 5, maxLength: 6 } } },
    accept: ['{"a":""}', '{"a":"a-1b"}', '{"b":"a:b:x"}', '{"b":"ab:c:x"}'],
    reject: ['{"a":"abcde"}', '{"a":"1"}', '{"b":"a::x"}', '{"b":"abc:d:x"}'],
    // Two open parts share the range: the second writes at least one letter, so the shortest is long enough.
    narrowed: ['{"b":"ab::x"}', '{"b":"abc::x"}'],
  },
  {
    name: "a property named __proto__ is additional to the validator (ajv skips it in properties)",
    schema: JSON.parse('{"type": "object", "properties": {"kind": {"type": "string"}, "__proto__": {"type": "string"}}, "additionalProperties": false}'),
    accept: ['{"kind":"a"}', "{}"],
    reject: ['{"__proto__":"1"}', '{"kind":"a","__proto__":"1"}'],
  },
  {
    name: "a required __proto__ takes the additionalProperties schema",
    schema: JSON.parse('{"type": "object", "properties": {"a": {"type": "string"}, "__proto__": {"type": "string"}}, "required": ["__proto__"], "additionalProperties": {"type": "integer"}}'),
    accept: ['{"__proto__":1}', '{"a":"s","__proto__":2}'],
    reject: ['{"__proto__":"s"}', '{"a":"s"}'],
  },
  {
    name: "if/then/else on a required discriminator: the condition with then, else without the key",
    schema: {
      type: "object",
      properties: { kind: { enum: ["a", "b"] }, x: { type: "string" }, y: { type: "integer" } },
      if: { properties: { kind: { const: "a" } }, required: ["kind"] },
      then: { required: ["x"] },
      else: { required: ["y"] },
    },
    accept: ['{"kind":"a","x":"s"}', '{"y":1}', '{"x":"s","y":1}'],
    reject: ['{"kind":"a"}', '{"kind":"b"}', '{"x":"s"}', "{}"],
    narrowed: ['{"kind":"b","y":1}'],
  },
  {
    name: "if/then/else on an optional discriminator of known values: else takes the others",
    schema: {
      type: "object",
      properties: { kind: { enum: ["a", "b", "c"] }, x: { type: "string" }, y: { type: "integer" } },
      required: ["kind"],
      if: { properties: { kind: { const: "a" } } },
      then: { required: ["x"] },
      else: { required: ["y"] },
    },
    accept: ['{"kind":"a","x":"s"}', '{"kind":"b","y":1}', '{"kind":"c","x":"t","y":2}'],
    reject: ['{"kind":"a"}', '{"kind":"b"}', '{"kind":"b","x":"s"}', '{"kind":"d","y":1}'],
  },
  {
    name: "if/then/else on a condition other than a discriminator is left to validation",
    schema: { type: "object", properties: { c: { type: "string" }, a: { type: "string" } }, if: { properties: { c: { enum: ["ghi"] } } }, then: { required: ["a", "c"] }, else: { required: ["c"] } },
    accept: ['{"c":"ghi","a":"s"}', '{"c":"x"}'],
    reject: [],
    exact: false,
  },
  {
    name: "oneOf of keys required alone: each branch writes none of the others' keys",
    schema: { type: "object", properties: { ssn: { type: "string" }, ein: { type: "string" }, name: { type: "string" } }, additionalProperties: false, oneOf: [{ required: ["ssn"] }, { required: ["ein"] }] },
    accept: ['{"ssn":"1"}', '{"ein":"2","name":"n"}'],
    reject: ['{"ssn":"1","ein":"2"}', '{"name":"n"}', "{}"],
  },
  {
    name: "oneOf with an optional discriminator: it is always written",
    schema: {
      oneOf: [
        { type: "object", properties: { kind: { const: "a" }, x: { type: "string" } } },
        { type: "object", properties: { kind: { enum: ["b", "c"] }, y: { type: "integer" } } },
      ],
    },
    accept: ['{"kind":"a","x":"s"}', '{"kind":"c","y":1}'],
    reject: ["{}", '{"x":"s"}', '{"kind":"d"}'],
  },
  {
    name: "oneOf of objects without a type: only objects, told apart by a required key's values",
    schema: { oneOf: [{ properties: { kind: { const: "a" } }, required: ["kind"] }, { properties: { kind: { const: "b" } }, required: ["kind"] }] },
    accept: ['{"kind":"a"}', '{"kind":"b"}'],
    reject: ['"x"', "1", "{}", '{"kind":"c"}'],
  },
  {
    name: "oneOf of values: those in two branches are left out",
    schema: { type: "object", properties: { v: { oneOf: [{ enum: ["a", "b"] }, { enum: ["b", "c", 1] }, { type: "string", maxLength: 0 }] } }, required: ["v"] },
    accept: ['{"v":"a"}', '{"v":"c"}', '{"v":1}', '{"v":""}'],
    reject: ['{"v":"b"}', '{"v":"d"}'],
  },
  { name: "pattern of one class with maxLength", schema: { type: "string", pattern: "^[a-z0-9-]+$", maxLength: 5 }, accept: ['"ab-1"', '"abcde"'], reject: ['""', '"abcdef"', '"AB"'] },
  {
    name: "dependencies (property form)",
    schema: { type: "object", properties: { card: { type: "string" }, billing: { type: "string" } }, dependencies: { card: ["billing"] } },
    accept: ['{"billing":"x"}', '{"card":"1","billing":"x"}'],
    reject: ['{"card":"1"}'],
  },
  { name: "uniqueItems is left to validation", schema: { type: "array", items: { type: "integer" }, uniqueItems: true }, accept: ["[1,2]"], reject: ['["a"]'], exact: false },
  {
    name: "uniqueItems over an enum: distinct values in declared order",
    schema: { type: "array", items: { enum: ["a", "b", "c"] }, uniqueItems: true, minItems: 1, maxItems: 2 },
    accept: ['["a"]', '["a","c"]', '["b", "c"]'],
    reject: ["[]", '["a","a"]', '["a","b","c"]', '["d"]'],
  },
  {
    name: "a schema dependency, applied always (draft-07 dependencies)",
    schema: { type: "object", properties: { card: { type: "string" }, billing: { type: "string" } }, dependencies: { card: { required: ["billing"] } } },
    accept: ['{"card":"x","billing":"y"}', '{"billing":"y"}'],
    reject: ['{"card":"x"}', '{"card":1,"billing":"y"}'],
  },
  {
    name: "dependentSchemas narrowing a property",
    schema: { type: "object", properties: { a: { type: "integer" }, b: { type: "integer" } }, dependentSchemas: { a: { properties: { b: { minimum: 5 } } } } },
    accept: ['{"a":1,"b":5}', '{"b":7}', '{"a":1}'],
    reject: ['{"a":1,"b":4}'],
  },
  {
    name: "dependencies of keys that applying other dependencies requires, and of a map's keys (found by the grammar fuzzer)",
    schema: { type: "object", allOf: [{ dependencies: { a: { required: ["b", "c"] }, c: { allOf: [{ required: ["c1"] }, { required: ["c2"] }] } } }, { required: ["a"] }] },
    accept: ['{"a":1,"b":2,"c":3,"c1":4,"c2":5}'],
    reject: ['{"a":1,"b":2,"c":3}', '{"a":1,"b":2,"c":3,"c1":4}'],
  },
  {
    name: "a schema dependency on a key a map may write",
    schema: { type: "object", additionalProperties: { type: "integer" }, dependencies: { x: { required: ["y"] } } },
    accept: ['{"y":1}'],
    reject: ['{"x":1}'],
  },
  {
    name: "a dependency no value could meet always is left to validation",
    schema: { type: "object", properties: { a: { type: "string" } }, additionalProperties: false, dependencies: { a: { required: ["z"] } } },
    accept: ["{}"],
    reject: ['{"a":1}'],
    exact: false,
  },
  {
    name: "\\s as ECMAScript reads it, Unicode spaces included (found by the grammar fuzzer)",
    schema: { type: "string", pattern: "^[^:\\s]+:[^\\s]+$" },
    accept: ['"a:b"', '"é:ü"'],
    reject: ['"a:b\u2003c"', '"a\u3000:b"', '"a:\u1680"', '"a:b\u202fc"'],
  },
  {
    name: "numeric formats the validator checks: int32 in 32 bits, int64 integers (found by the grammar fuzzer)",
    schema: { type: "object", properties: { a: { type: "integer", format: "int32" }, b: { type: "number", format: "int64" } }, required: ["a", "b"] },
    accept: ['{"a":2147483647,"b":5}', '{"a":-2147483648,"b":-1}'],
    reject: ['{"a":2147483648,"b":5}', '{"a":1474750332818,"b":5}', '{"a":1,"b":2.5}'],
  },
  { name: "uniqueItems over booleans", schema: { type: "array", items: { type: "boolean" }, uniqueItems: true }, accept: ["[]", "[false]", "[false,true]", "[true]"], reject: ["[true,true]", "[false,false]", "[1]"] },
  {
    name: "uniqueItems over a referenced enum that another keyword filters",
    schema: { type: "array", items: { $ref: "#/$defs/c" }, uniqueItems: true, minItems: 2, $defs: { c: { enum: ["r", "g", "b"], not: { const: "g" } } } },
    accept: ['["r","b"]'],
    reject: ['["r"]', '["r","g"]', '["b","b"]', "[]"],
  },
];

describe("JSON Schema → GBNF, checked by llama.cpp's grammar engine", () => {
  let checker: GrammarChecker;
  const ajv = new Ajv2020({ strict: false, ownProperties: true, loopRequired: 0 }); // as the validator
  addFormats(ajv);

  beforeAll(async () => {
    checker = await createGrammarChecker();
  });
  afterAll(() => checker?.dispose());

  for (const c of CASES) {
    it(c.name, async () => {
      const validate = ajv.compile(c.schema);
      for (const text of [...c.accept, ...(c.narrowed ?? [])]) expect(validate(JSON.parse(text)), `ajv: ${text} is valid`).toBe(true);
      for (const text of c.reject) {
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          continue; // not JSON at all: invalid by definition
        }
        expect(validate(parsed), `ajv: ${text} is invalid`).toBe(false);
      }

      const compiled = compileGrammar(c.schema);
      expect(compiled.exact, compiled.unexpressed.join("; ")).toBe(c.exact ?? true);
      const grammar = await checker.grammar(compiled.gbnf);
      for (const text of c.accept) expect(checker.accepts(grammar, text), `grammar accepts ${text}\n${compiled.gbnf}`).toBe(true);
      for (const text of [...c.reject, ...(c.narrowed ?? [])]) expect(checker.accepts(grammar, text), `grammar refuses ${text}\n${compiled.gbnf}`).toBe(false);
    });
  }

  it("records what it left to validation", () => {
    const { exact, unexpressed } = compileGrammar({ type: "object", properties: { n: { type: "number", multipleOf: 0.5 }, s: { not: { const: "x" } } } });
    expect(exact).toBe(false);
    expect(unexpressed).toEqual(expect.arrayContaining(["multipleOf at /properties/n", "not at /properties/s"]));
  });

  it("bounds its work: recursive references joined under allOf fall back to any JSON instead of running for ever", () => {
    // Three mutually recursive chains under one allOf multiply the visits at every level.
    const chain = (n: string, m: number) => ({
      [`${n}0`]: { additionalProperties: { allOf: [{ $ref: `#/definitions/${n}1` }, { multipleOf: m }] }, required: [`${n}0`] },
      [`${n}1`]: { additionalProperties: { $ref: `#/definitions/${n}0` }, required: ["a", `${n}1`] },
    });
    const schema = {
      allOf: [{ $ref: "#/definitions/node" }, { $ref: "#/definitions/p0" }, { $ref: "#/definitions/q0" }, { $ref: "#/definitions/r0" }],
      definitions: {
        node: { type: "object", properties: { a: { $ref: "#/definitions/node" }, b: { type: "integer" } }, required: ["b"] },
        ...chain("p", 2),
        ...chain("q", 3),
        ...chain("r", 5),
      },
    };
    const compiled = compileGrammar(schema);
    expect(compiled).toEqual({ gbnf: compileGrammar(true).gbnf, exact: false, unexpressed: ["grammar size"], fallback: "grammar size" });
  });

  it("leaves a reference by anchor to validation instead of resolving it as a pointer (found by the fuzzer)", () => {
    const schema = {
      $schema: "http://json-schema.org/draft-04/schema#",
      definitions: { drive: { id: "#drive", type: "object", properties: { limit: { type: "number" } }, required: ["limit"] } },
      type: "object",
      properties: { drive: { $ref: "#drive" } },
    };
    const compiled = compileGrammar(schema);
    expect(compiled.exact).toBe(false);
    expect(compiled.unexpressed).toContain("$ref (anchor) at /properties/drive");
  });

  it("refuses schemas that admit no value", () => {
    expect(() => compileGrammar(false)).toThrow(UnsatisfiableSchemaError);
    expect(() => compileGrammar({ type: "object", properties: { a: false }, required: ["a"] })).toThrow(UnsatisfiableSchemaError);
  });
});
