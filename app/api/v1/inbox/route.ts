import { randomBytes } from "node:crypto";
import { inboxUrl } from "@/lib/delivery/own-inbox";
import { inboxSchema } from "@/lib/api/responses";
import { reply } from "@/lib/http/problem";
import { otherMethods, route } from "@/lib/http/route";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

/** Creates a built-in callback receiver: an unguessable URL whose deliveries this key can read (at most `limits.inboxesPerKey` per key). */
// The URL is built from the configured public address (server.publicUrl), never from the request's
// Host header, which the caller chooses.
export const POST = route(async ({ runtime, principal }) => {
  const caller = await principal();
  const id = `inb_${randomBytes(18).toString("base64url")}`;
  await runtime.store.inboxes.create({ id, keyId: caller.keyId, host: new URL(runtime.publicUrl).host, createdAt: new Date().toISOString() }, runtime.config.limits.inboxesPerKey);
  return reply(inboxSchema, { id, url: inboxUrl(runtime.publicUrl, id) }, { status: 201 });
});

export const { GET, PUT, PATCH, DELETE } = otherMethods("POST");
