import { escapePointerSegment, unescapePointerSegment } from "../json/pointer";
import { own } from "../json/own";
/**
 * Where in a schema the rule for an instance location lives: `/lines/0/amount` in the output maps
 * to `/properties/lines/items/properties/amount` in the schema (following local $refs). Stops at
 * the deepest part it can follow. Browser-safe.
 */
export function schemaPathFor(schema: unknown, instancePath: string): string {
  const root = schema as Record<string, unknown>;
  const segments = instancePath.split("/").slice(1).filter((s) => s !== "").map(unescapePointerSegment);
  let node = root;
  let path = "";
  const escape = escapePointerSegment;
  for (const segment of segments) {
    for (let hops = 0; typeof node?.$ref === "string" && node.$ref.startsWith("#/") && hops < 10; hops++) {
      const refPath = node.$ref.slice(1);
      node = refPath.split("/").slice(1).reduce<Record<string, unknown>>((n, k) => own(n, unescapePointerSegment(k)) as Record<string, unknown>, root);
      path = refPath;
    }
    const properties = node?.properties as Record<string, Record<string, unknown>> | undefined;
    if (properties && Object.hasOwn(properties, segment)) {
      node = properties[segment]!;
      path += `/properties/${escape(segment)}`;
    } else if (/^\d+$/.test(segment) && Array.isArray(node?.prefixItems) && node.prefixItems[Number(segment)]) {
      node = node.prefixItems[Number(segment)] as Record<string, unknown>;
      path += `/prefixItems/${segment}`;
    } else if (/^\d+$/.test(segment) && node?.items && typeof node.items === "object" && !Array.isArray(node.items)) {
      node = node.items as Record<string, unknown>;
      path += "/items";
    } else {
      break;
    }
  }
  return path;
}
