import { ContextsPage } from "@/components/catalog/catalog-pages";

export default function Page() {
  return <ContextsPage />;
}
