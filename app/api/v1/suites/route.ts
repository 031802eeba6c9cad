import { listSuites } from "@/lib/http/evaluation-routes";
import { otherMethods } from "@/lib/http/route";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const GET = listSuites;

export const { POST, PUT, PATCH, DELETE } = otherMethods("GET");
