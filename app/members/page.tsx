import { MembersPage } from "@/components/members/members-page";

export default function Page() {
  return <MembersPage />;
}
