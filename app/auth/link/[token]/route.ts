import { link, linkPage } from "@/lib/http/auth-routes";
import { otherMethods } from "@/lib/http/route";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const GET = linkPage;
export const POST = link;
export const { PUT, PATCH, DELETE } = otherMethods("GET", "POST");
