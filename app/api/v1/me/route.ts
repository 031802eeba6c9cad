import { meSchema } from "@/lib/api/responses";
import { reply } from "@/lib/http/problem";
import { otherMethods, route } from "@/lib/http/route";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

/** The calling key: id, name and whether it is an admin key (the playground shows admin pages by it). */
export const GET = route(async ({ principal }) => {
  const caller = await principal();
  return reply(meSchema, { keyId: caller.keyId, name: caller.name, admin: caller.admin });
});

export const { POST, PUT, PATCH, DELETE } = otherMethods("GET");
