import { randomBytes } from "node:crypto";
import { json } from "@/lib/http/problem";
import { route } from "@/lib/http/route";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

/** Creates a built-in callback receiver: an unguessable URL whose deliveries this key can read. */
export const POST = route(async ({ request, runtime, principal }) => {
  const caller = await principal();
  const url = new URL(request.url);
  const host = request.headers.get("host") ?? url.host;
  const id = `inb_${randomBytes(18).toString("base64url")}`;
  await runtime.store.inboxes.create({ id, keyId: caller.keyId, host, createdAt: new Date().toISOString() });
  return json({ id, url: `${url.protocol}//${host}/api/v1/inbox/${id}` }, { status: 201 });
});
