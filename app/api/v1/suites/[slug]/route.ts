import { suiteRoutes } from "@/lib/http/evaluation-routes";
import { otherMethods } from "@/lib/http/route";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const { GET, PUT, DELETE } = suiteRoutes;

export const { POST, PATCH } = otherMethods("GET", "PUT", "DELETE");
