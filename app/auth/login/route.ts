import { login } from "@/lib/http/auth-routes";
import { otherMethods } from "@/lib/http/route";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const GET = login;
export const { POST, PUT, PATCH, DELETE } = otherMethods("GET");
