import "server-only";
import { actorOf, type AuditOrigin } from "../audit/audit-log";
import { clientInfo } from "./caller";
import type { AuditEntry } from "../store/store-types";
import type { RouteContext } from "./route";

const USER_AGENT_CHARS = 200;

/** Who is changing something through this request, from where: what the audit log records. */
export async function originOf(ctx: Pick<RouteContext<unknown>, "request" | "principal">): Promise<AuditOrigin> {
  const caller = await ctx.principal();
  return { actor: actorOf(caller), ip: clientInfo(ctx.request).ip, userAgent: ctx.request.headers.get("user-agent")?.slice(0, USER_AGENT_CHARS) ?? null, projectId: caller.projectId };
}

/** Records a change made by this request in the audit log. */
export async function audit(ctx: Pick<RouteContext<unknown>, "request" | "principal" | "runtime">, action: string, subject: { kind: string; id: string }, changes?: AuditEntry["changes"]): Promise<void> {
  await ctx.runtime.services.audit.record(await originOf(ctx), action, subject, changes);
}
