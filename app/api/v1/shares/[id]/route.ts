import { otherMethods } from "@/lib/http/route";
import { revokeShare } from "@/lib/http/share-routes";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const DELETE = revokeShare;

export const { GET, POST, PUT, PATCH } = otherMethods("DELETE");
