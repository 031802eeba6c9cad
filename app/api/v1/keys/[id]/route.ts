import { keyEntry } from "@/lib/http/keys-routes";
import { otherMethods } from "@/lib/http/route";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const { GET, PATCH, DELETE } = keyEntry;

export const { POST, PUT } = otherMethods("GET", "PATCH", "DELETE");
