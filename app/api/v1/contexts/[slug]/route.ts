import { catalogEntryRoutes } from "@/lib/http/catalog-routes";
import { otherMethods } from "@/lib/http/route";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const { GET, PUT, DELETE } = catalogEntryRoutes("context");

export const { POST, PATCH } = otherMethods("GET", "PUT", "DELETE");
