import { otherMethods } from "@/lib/http/route";
import { shareEvaluation } from "@/lib/http/share-routes";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const POST = shareEvaluation;

export const { GET, PUT, PATCH, DELETE } = otherMethods("POST");
