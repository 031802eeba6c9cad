import "server-only";
import { createHash, timingSafeEqual } from "node:crypto";
import { DEFAULT_PROJECT_ID } from "../domain/roles";
import { GenserveError } from "../errors";
import { route } from "./route";

const digest = (value: string) => createHash("sha256").update(value, "utf8").digest();

/**
 * GET /metrics in the Prometheus text format: for a scraper with `Authorization: Bearer
 * <observability.metricsToken>`, or an admin key (Api-Key). Metrics name workflows, models and key
 * ids, so they are not public.
 */
export const metrics = route(async ({ request, runtime, principal }) => {
  const token = runtime.config.observability.metricsToken;
  const bearer = /^Bearer\s+(\S+)$/i.exec(request.headers.get("authorization") ?? "")?.[1];
  const byToken = token !== undefined && bearer !== undefined && timingSafeEqual(digest(bearer), digest(token));
  if (!byToken) {
    if (request.headers.get("api-key") === null && bearer !== undefined) throw new GenserveError("unauthorized", { detail: "The metrics token is not valid." });
    const caller = await principal();
    // Metrics span every project: they are the install's, read by the default project's admins.
    if (!caller.admin || caller.projectId !== DEFAULT_PROJECT_ID) throw new GenserveError("forbidden", { detail: "Metrics are for admin keys of the default project and the configured metrics token (observability.metricsToken)." });
  }
  const { body, contentType } = await runtime.metrics.render();
  return new Response(body, { headers: { "Content-Type": contentType, "Cache-Control": "no-store" } });
});
