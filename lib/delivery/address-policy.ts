import "server-only";
import type { FieldError } from "../errors";
import { isPrivateAddress, literalAddress } from "../net/address-guard";
import type { Store } from "../store/store-types";
import { isOwnInbox } from "./own-inbox";

export interface CallbackAddressOptions {
  allowPrivate: boolean;
  /** The service's public base URL: its own built-in inboxes there may be on any address. */
  publicUrl: string;
}

/**
 * Which addresses a callback to `url` may reach: public ones; any, for the service's own built-in
 * inbox at its configured public URL; any, with `network.allowPrivate`. The one policy for
 * callbacks, applied when a run is planned (to a URL naming an address literally) and at every
 * delivery attempt (to every address the host resolves to, and to a literal one, which no lookup sees).
 */
export async function callbackAddressFilter(store: Store, url: URL, options: CallbackAddressOptions): Promise<AddressFilter> {
  return options.allowPrivate || (await isOwnInbox(store, url, options.publicUrl)) ? ANY_ADDRESS : PUBLIC_ADDRESS;
}

/** Which addresses a connection may be made to. There are two, so connections can be pooled by the one they were checked under. */
export type AddressFilter = (address: string) => boolean;
const ANY_ADDRESS: AddressFilter = () => true;
const PUBLIC_ADDRESS: AddressFilter = (address) => !isPrivateAddress(address);

/**
 * A callback URL refused before anything is stored (it names a refused address literally; a
 * hostname is checked at each delivery), as the problem at `/callback/url`; null when it may be used.
 */
export async function callbackUrlProblem(store: Store, raw: string, options: CallbackAddressOptions): Promise<FieldError | null> {
  const url = new URL(raw);
  if (!refusesLiteral(url, await callbackAddressFilter(store, url, options))) return null;
  return { path: "/callback/url", message: "refers to a private address; callbacks go to public addresses (network.allowPrivate is false)" };
}

/** Whether the URL names an address literally that the policy refuses. */
export function refusesLiteral(url: URL, allowed: AddressFilter): boolean {
  const literal = literalAddress(url);
  return literal !== null && !allowed(literal);
}
