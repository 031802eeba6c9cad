import { WorkflowsPage } from "@/components/catalog/catalog-pages";

export default function Page() {
  return <WorkflowsPage />;
}
