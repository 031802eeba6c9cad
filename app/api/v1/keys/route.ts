import { keyCollection } from "@/lib/http/keys-routes";
import { otherMethods } from "@/lib/http/route";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const { GET, POST } = keyCollection;

export const { PUT, PATCH, DELETE } = otherMethods("GET", "POST");
