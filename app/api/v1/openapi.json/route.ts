import { buildOpenApiDocument } from "@/lib/api/openapi";
import { otherMethods, route } from "@/lib/http/route";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

let cached: string | undefined;

export const GET = route(async ({ runtime }) => {
  cached ??= JSON.stringify(buildOpenApiDocument(runtime.version));
  return new Response(cached, { headers: { "Content-Type": "application/json", "Cache-Control": "public, max-age=60" } });
});

export const { POST, PUT, PATCH, DELETE } = otherMethods("GET");
