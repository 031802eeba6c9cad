import { Webhook } from "standardwebhooks";
import { inboxQuery } from "@/lib/api/requests";
import { GenserveError, validationError, zodFieldErrors } from "@/lib/errors";
import { inboxUrl } from "@/lib/delivery/own-inbox";
import { readBodyText } from "@/lib/http/body";
import { inboxEventsSchema } from "@/lib/api/responses";
import { reply } from "@/lib/http/problem";
import { otherMethods, route } from "@/lib/http/route";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

/**
 * Receives a delivery (no key: the unguessable id is the capability) and checks its signature.
 * Whoever holds the URL may post, so each body is bounded (`limits.inboxEventBytes`) and the inbox
 * keeps only its newest deliveries within `limits.inboxKeep`, `inboxBytes` and `inboxMaxAgeMs`.
 */
export const POST = route<{ id: string }>(async ({ request, runtime, params }) => {
  const limits = runtime.config.limits;
  const inbox = await runtime.store.inboxes.get(params.id);
  if (!inbox) throw new GenserveError("not_found", { detail: "No such inbox." });
  const body = await readBodyText(request, Math.min(limits.inboxEventBytes, limits.inboxBytes), "limits.inboxEventBytes");
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
  await runtime.store.inboxes.receive(inbox.id, { receivedAt: new Date().toISOString(), headers, body, verified }, { keep: limits.inboxKeep, maxBytes: limits.inboxBytes, maxAgeMs: limits.inboxMaxAgeMs });
  return new Response(null, { status: 204 });
});

/** The inbox's deliveries, newest first, a page at a time (`limit`, `cursor`), for the key that created it. */
export const GET = route<{ id: string }>(async ({ request, runtime, principal, params }) => {
  const caller = await principal();
  const parsed = inboxQuery.safeParse(Object.fromEntries(new URL(request.url).searchParams), { reportInput: true });
  if (!parsed.success) throw validationError(zodFieldErrors(parsed.error).map((e) => ({ ...e, path: `?${e.path.slice(1)}` })));
  const inbox = await runtime.store.inboxes.get(params.id);
  if (!inbox || inbox.keyId !== caller.keyId) throw new GenserveError("not_found", { detail: "No such inbox for this key." });
  const { limit, cursor } = parsed.data;
  const page = await runtime.store.inboxes.events(inbox.id, { before: cursor === undefined ? undefined : Number(cursor), limit, maxBytes: runtime.config.limits.inboxPageBytes });
  const events = page.events.map((e) => ({ receivedAt: e.receivedAt, headers: e.headers, body: parseOrText(e.body), verified: e.verified }));
  return reply(inboxEventsSchema, { id: inbox.id, url: inboxUrl(runtime.publicUrl, inbox.id), events, nextCursor: page.next === null ? null : String(page.next) });
});

function parseOrText(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return body;
  }
}

export const { PUT, PATCH, DELETE } = otherMethods("GET", "POST");
