import { logout } from "@/lib/http/auth-routes";
import { otherMethods } from "@/lib/http/route";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const POST = logout;
export const { GET, PUT, PATCH, DELETE } = otherMethods("POST");
