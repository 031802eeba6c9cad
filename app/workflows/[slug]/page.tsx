import { WorkflowDetailPage } from "@/components/catalog/workflow-detail";

export default async function Page({ params }: { params: Promise<{ slug: string }> }) {
  const { slug } = await params;
  return <WorkflowDetailPage slug={decodeURIComponent(slug)} />;
}
