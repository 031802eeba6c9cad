import { AuditPage } from "@/components/audit/audit-page";

export default function Page() {
  return <AuditPage />;
}
