/**
 * A large schema shaped like the ones users paste from Kubernetes or SchemaStore: many definitions,
 * each an object of described, typed properties (some enums, patterns, arrays, maps), linked by
 * local `$ref`s, under a root that refers to a few of them. Deterministic for a given size.
 */
export function largeSchema(targetBytes: number): Record<string, unknown> {
  const definitions: Record<string, unknown> = {};
  const names: string[] = [];
  const root = { $schema: "http://json-schema.org/draft-07/schema#", type: "object", definitions, properties: {} as Record<string, unknown>, required: ["apiVersion", "kind"] };
  let i = 0;
  while (JSON.stringify(root).length < targetBytes) {
    const name = `io.k8s.api.group${i % 40}.v1.Kind${i}`;
    const properties: Record<string, unknown> = {
      apiVersion: { type: "string", description: `APIVersion defines the versioned schema of this representation of an object (${i}).` },
      kind: { type: "string", enum: [`Kind${i}`, `Kind${i}List`] },
      name: { type: "string", maxLength: 253, pattern: "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$" },
      replicas: { type: "integer", format: "int32", minimum: 0, description: "Number of desired pods. Defaults to 1." },
      labels: { type: "object", additionalProperties: { type: "string" }, description: "Map of string keys and values that can be used to organize and categorize objects." },
      ports: { type: "array", items: { type: "object", properties: { port: { type: "integer", minimum: 1, maximum: 65535 }, protocol: { type: "string", enum: ["TCP", "UDP", "SCTP"] } }, required: ["port"] } },
    };
    // Links to earlier definitions, as object types refer to their parts.
    for (const back of [1, 7, 31]) if (i >= back) properties[`part${back}`] = { $ref: `#/definitions/${names[i - back]}`, description: "A part described elsewhere." };
    definitions[name] = { type: "object", description: `Kind${i} is a resource of group ${i % 40}, described here at some length as real specifications are.`, properties, required: ["kind"] };
    names.push(name);
    i++;
  }
  root.properties = {
    apiVersion: { type: "string" },
    kind: { type: "string" },
    spec: { $ref: `#/definitions/${names[names.length - 1]}` },
    items: { type: "array", items: { $ref: `#/definitions/${names[Math.floor(names.length / 2)]}` } },
  };
  return root;
}
