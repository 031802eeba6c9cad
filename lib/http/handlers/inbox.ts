import "server-only";
import { inboxQuery } from "../../api/requests";
import { inboxEventsSchema, inboxSchema } from "../../api/responses";
import { validationError, zodFieldErrors } from "../../errors";
import { readBodyText } from "../body";
import { pageParams } from "../doc-parts";
import { EDITOR, endpoint, VIEWER } from "../endpoint";

const INBOX = EDITOR("Only editor and admin keys may create inboxes.");
import { reply } from "../problem";

function parseOrText(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return body;
  }
}

export const endpoints = [
  endpoint({
    method: "POST",
    path: "/api/v1/inbox",
    operationId: "createInbox",
    summary: "Create a built-in callback receiver (at most `limits.inboxesPerKey` per key)",
    auth: INBOX,
    responses: { "201": { description: "The inbox: its id and the URL to send callbacks to.", body: inboxSchema } },
    errors: ["unauthorized", "quota_exceeded", "storage_full"],
    // The URL is built from the configured public address (server.publicUrl), never from the request's
    // Host header, which the caller chooses.
    handler: async ({ runtime, principal }) => {
      const caller = await principal();
      return reply(inboxSchema, await runtime.services.inboxes.create(caller.keyId, runtime.config.limits.inboxesPerKey), { status: 201 });
    },
  }),
  endpoint({
    method: "GET",
    path: "/api/v1/inbox/{id}",
    operationId: "getInbox",
    summary: "The inbox's received events (the key that created it), a page at a time",
    auth: VIEWER,
    parameters: pageParams(100, 100),
    responses: { "200": { description: "Events, newest first, with whether each signature verified: at most `limit`, and at most `limits.inboxPageBytes` of them (always one).", body: inboxEventsSchema } },
    errors: ["validation_failed", "unauthorized", "not_found"],
    /** The inbox's deliveries, newest first, a page at a time (`limit`, `cursor`), for the key that created it. */
    handler: async ({ request, runtime, principal, params }) => {
      const caller = await principal();
      const parsed = inboxQuery.safeParse(Object.fromEntries(new URL(request.url).searchParams), { reportInput: true });
      if (!parsed.success) throw validationError(zodFieldErrors(parsed.error).map((e) => ({ ...e, path: `?${e.path.slice(1)}` })));
      const inboxes = runtime.services.inboxes;
      const inbox = await inboxes.owned(caller.keyId, params.id);
      const { limit, cursor } = parsed.data;
      const page = await inboxes.events(inbox.id, { before: cursor === undefined ? undefined : Number(cursor), limit, maxBytes: runtime.config.limits.inboxPageBytes });
      const events = page.events.map((e) => ({ receivedAt: e.receivedAt, headers: e.headers, body: parseOrText(e.body), verified: e.verified }));
      return reply(inboxEventsSchema, { id: inbox.id, url: inboxes.urlOf(inbox.id), events, nextCursor: page.next === null ? null : String(page.next) });
    },
  }),
  endpoint({
    method: "POST",
    path: "/api/v1/inbox/{id}",
    operationId: "deliverToInbox",
    summary: "Receive an event (no key: the unguessable id is the capability)",
    auth: "none",
    responses: { "204": { description: "Stored (the inbox keeps its newest deliveries within its limits)." } },
    errors: ["not_found", "payload_too_large", "storage_full"],
    /**
     * Receives a delivery and checks its signature. Whoever holds the URL may post, so each body is
     * bounded (`limits.inboxEventBytes`) and the inbox keeps only its newest deliveries within
     * `limits.inboxKeep`, `inboxBytes` and `inboxMaxAgeMs`.
     */
    handler: async ({ request, runtime, params }) => {
      const limits = runtime.config.limits;
      const readBody = () => readBodyText(request, Math.min(limits.inboxEventBytes, limits.inboxBytes), "limits.inboxEventBytes");
      await runtime.services.inboxes.receive(params.id, readBody, request.headers, { keep: limits.inboxKeep, maxBytes: limits.inboxBytes, maxAgeMs: limits.inboxMaxAgeMs });
      return new Response(null, { status: 204 });
    },
  }),
];
