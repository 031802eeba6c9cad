import { switchProject } from "@/lib/http/member-routes";
import { otherMethods } from "@/lib/http/route";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const POST = switchProject;
export const { GET, PUT, PATCH, DELETE } = otherMethods("POST");
