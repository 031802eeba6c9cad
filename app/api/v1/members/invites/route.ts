import { routesFor } from "@/lib/http/table";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const { GET, POST, PUT, PATCH, DELETE } = routesFor("/api/v1/members/invites");
