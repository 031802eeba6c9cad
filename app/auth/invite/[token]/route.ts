import { invite, invitePage } from "@/lib/http/member-routes";
import { otherMethods } from "@/lib/http/route";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const GET = invitePage;
export const POST = invite;
export const { PUT, PATCH, DELETE } = otherMethods("GET", "POST");
