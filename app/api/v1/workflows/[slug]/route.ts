import { catalogEntryRoutes } from "@/lib/http/catalog-routes";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const { GET, PUT, DELETE } = catalogEntryRoutes("workflow");
