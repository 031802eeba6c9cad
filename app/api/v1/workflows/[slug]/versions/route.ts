import { otherMethods } from "@/lib/http/route";
import { listVersions } from "@/lib/http/workflow-routes";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const GET = listVersions;

export const { POST, PUT, PATCH, DELETE } = otherMethods("GET");
