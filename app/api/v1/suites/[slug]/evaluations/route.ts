import { suiteEvaluationRoutes } from "@/lib/http/evaluation-routes";
import { otherMethods } from "@/lib/http/route";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const { GET, POST } = suiteEvaluationRoutes;

export const { PUT, PATCH, DELETE } = otherMethods("GET", "POST");
