import { z } from "zod";

/**
 * The API's named shapes (components of the OpenAPI document), in a registry of this module's own.
 *
 * Not zod's global registry: that one lives on `globalThis`, shared by every copy of these modules,
 * and Next.js bundles lib/api once per server layer (route handlers, server components, the SSR of
 * client pages), each copy registering its own `Callback`, `Attachment`… Once a second copy had
 * loaded (after any page such as /suites was rendered), the document generated from the global
 * registry met two schemas with one id and threw `Duplicate schema id "Callback"` — the docs page
 * and GET /api/v1/openapi.json failed until a restart. Each copy now fills and reads its own.
 */
export const apiShapes = z.registry<{ id: string }>();

type ShapeMeta = { id: string } & z.core.GlobalMeta;

/**
 * Names a shape: `.apply(named({ id: "Callback", description }))`. Its metadata goes where `.meta()`
 * puts it (descriptions and examples are read from there), its id also into `apiShapes`.
 */
export function named(meta: ShapeMeta): <T extends z.ZodType>(schema: T) => T {
  return <T extends z.ZodType>(schema: T): T => {
    const shape = schema.meta(meta) as T;
    apiShapes.add(shape, { id: meta.id });
    return shape;
  };
}
