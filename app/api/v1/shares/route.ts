import { otherMethods } from "@/lib/http/route";
import { listShares } from "@/lib/http/share-routes";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const GET = listShares;

export const { POST, PUT, PATCH, DELETE } = otherMethods("GET");
