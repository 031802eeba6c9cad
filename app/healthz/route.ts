import { otherMethods } from "@/lib/http/route";
export const runtime = "nodejs";
export const dynamic = "force-dynamic";

/** Liveness: the process answers. */
export function GET(): Response {
  return Response.json({ status: "ok" }, { headers: { "Cache-Control": "no-store" } });
}

export const { POST, PUT, PATCH, DELETE } = otherMethods("GET");
