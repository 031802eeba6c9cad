import { SuitesPage } from "@/components/suites/suites-page";

export default function Page() {
  return <SuitesPage />;
}
