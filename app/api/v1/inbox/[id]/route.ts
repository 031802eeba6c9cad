import { Webhook } from "standardwebhooks";
import { GenserveError } from "@/lib/errors";
import { inboxUrl } from "@/lib/delivery/own-inbox";
import { readBodyText } from "@/lib/http/body";
import { inboxEventsSchema } from "@/lib/api/responses";
import { reply } from "@/lib/http/problem";
import { otherMethods, route } from "@/lib/http/route";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

const KEEP = 100;
const MAX_AGE_MS = 24 * 60 * 60 * 1000;
const MAX_BODY = 1024 * 1024;

/** Receives a delivery (no key: the unguessable id is the capability) and checks its signature. */
export const POST = route<{ id: string }>(async ({ request, runtime, params }) => {
  const inbox = await runtime.store.inboxes.get(params.id);
  if (!inbox) throw new GenserveError("not_found", { detail: "No such inbox." });
  const body = await readBodyText(request, MAX_BODY, "the inbox limit");
  const headers = Object.fromEntries([...request.headers.entries()].filter(([name]) => !/^(cookie|authorization|api-key)$/i.test(name)));
  const secrets = await runtime.store.keys.secrets(inbox.keyId);
  const candidates = [secrets?.current, secrets?.previous].filter((s): s is string => Boolean(s));
  const verified = candidates.some((secret) => {
    try {
      new Webhook(secret).verify(body, headers);
      return true;
    } catch {
      return false;
    }
  });
  await runtime.store.inboxes.receive(inbox.id, { receivedAt: new Date().toISOString(), headers, body, verified }, KEEP, MAX_AGE_MS);
  return new Response(null, { status: 204 });
});

/** The inbox's deliveries, newest first, for the key that created it. */
export const GET = route<{ id: string }>(async ({ runtime, principal, params }) => {
  const caller = await principal();
  const inbox = await runtime.store.inboxes.get(params.id);
  if (!inbox || inbox.keyId !== caller.keyId) throw new GenserveError("not_found", { detail: "No such inbox for this key." });
  const events = (await runtime.store.inboxes.events(inbox.id)).map((e) => ({ ...e, body: parseOrText(e.body) }));
  return reply(inboxEventsSchema, { id: inbox.id, url: inboxUrl(runtime.publicUrl, inbox.id), events });
});

function parseOrText(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return body;
  }
}

export const { PUT, PATCH, DELETE } = otherMethods("GET", "POST");
