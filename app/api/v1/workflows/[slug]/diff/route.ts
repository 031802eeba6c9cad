import { otherMethods } from "@/lib/http/route";
import { diffVersions } from "@/lib/http/workflow-routes";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const GET = diffVersions;

export const { POST, PUT, PATCH, DELETE } = otherMethods("GET");
