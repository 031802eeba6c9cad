import { cancelEvaluation } from "@/lib/http/evaluation-routes";
import { otherMethods } from "@/lib/http/route";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const POST = cancelEvaluation;

export const { GET, PUT, PATCH, DELETE } = otherMethods("POST");
