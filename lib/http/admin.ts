import { GenserveError } from "../errors";
import type { Principal } from "../keys/keys";

/** Managing workflows and contexts is for admin keys. */
export function requireAdmin(principal: Principal): void {
  if (!principal.admin) throw new GenserveError("forbidden", { detail: "Only admin keys may change workflows and contexts." });
}
