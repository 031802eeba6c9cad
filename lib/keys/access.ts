import "server-only";
import type { Principal } from "./keys";

/**
 * Who may read what a key owns (runs, their streams and deliveries): the key itself, and admin
 * keys. Anything else is answered as if it did not exist.
 */
export const mayRead = (caller: Principal, ownerKeyId: string): boolean => caller.admin || caller.keyId === ownerKeyId;
