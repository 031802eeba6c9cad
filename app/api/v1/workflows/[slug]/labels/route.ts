import { otherMethods } from "@/lib/http/route";
import { listLabels } from "@/lib/http/workflow-routes";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const GET = listLabels;

export const { POST, PUT, PATCH, DELETE } = otherMethods("GET");
