"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { usePathname } from "next/navigation";
import { queryKeys } from "@/lib/client/query-keys";
import { useApiKey } from "./key-context";
import { ProjectSwitcher } from "./project-switcher";
import { useTheme } from "./theme";
import { Button } from "./ui/button";

const LINKS = [
  { href: "/", label: "Playground" },
  { href: "/runs", label: "Runs" },
  { href: "/suites", label: "Suites" },
  { href: "/workflows", label: "Workflows" },
  { href: "/contexts", label: "Contexts" },
  { href: "/usage", label: "Usage" },
  { href: "/keys", label: "Keys" },
  { href: "/members", label: "Members", admin: true },
  { href: "/audit", label: "Audit log", admin: true },
  { href: "/docs", label: "API reference" },
];

export function Nav() {
  const pathname = usePathname();
  const { apiKey, client, session, signOut, signOutError } = useApiKey();
  // Links only admin keys can use (the audit log) are shown to admin keys.
  const me = useQuery({ queryKey: queryKeys.me(apiKey ?? ""), queryFn: ({ signal }) => client!.me(signal), enabled: client !== null, staleTime: 60_000 });
  const admin = me.data?.admin ?? false;
  const { dark, toggle } = useTheme();
  // A share link's page is for people without a key: no way into the rest of the service.
  if (pathname.startsWith("/s/")) return null;
  return (
    <header className="border-b border-zinc-200 bg-white dark:border-zinc-800 dark:bg-zinc-950">
      <nav aria-label="Main" className="mx-auto flex max-w-[1600px] flex-wrap items-center gap-x-4 gap-y-1 px-4 py-2 sm:gap-x-5 sm:py-3">
        <span className="font-semibold">genserve</span>
        {/* On a phone: the theme and sign-out beside the name, the links one row under them that
            scrolls sideways (it wrapped to three lines); from `sm` up, one line. */}
        <div className="order-last -mx-4 flex w-[calc(100%+2rem)] gap-x-4 overflow-x-auto px-4 pb-1 whitespace-nowrap sm:order-none sm:mx-0 sm:w-auto sm:gap-x-5 sm:overflow-visible sm:px-0 sm:pb-0">
          {LINKS.filter((link) => !("admin" in link) || admin).map((link) => {
            const current = link.href === "/" ? pathname === "/" : pathname.startsWith(link.href);
            return (
              <Link
                key={link.href}
                href={link.href}
                aria-current={current ? "page" : undefined}
                className={`text-sm underline-offset-4 hover:underline ${current ? "font-semibold text-zinc-950 underline dark:text-white" : "text-zinc-700 dark:text-zinc-300"}`}
              >
                {link.label}
              </Link>
            );
          })}
        </div>
        <span className="ml-auto flex flex-wrap items-center justify-end gap-2 sm:gap-3">
          <Button onClick={toggle} aria-label={dark ? "Light theme" : "Dark theme"} title={dark ? "Light theme" : "Dark theme"}>
            <span className="hidden sm:inline">{dark ? "Light theme" : "Dark theme"}</span>
            <span aria-hidden className="sm:hidden">
              {dark ? "☀" : "☾"}
            </span>
          </Button>
          {apiKey ? (
            <>
              <ProjectSwitcher />
              <span className="hidden max-w-48 truncate text-sm text-zinc-700 sm:inline dark:text-zinc-300" title={session?.user?.email ?? session?.keyName}>
                {session?.user?.email ?? `key ${session?.keyName ?? ""}`}
              </span>
              {signOutError ? (
                <span role="alert" className="max-w-64 text-sm text-red-700 dark:text-red-400">
                  {signOutError}
                </span>
              ) : null}
              <Button onClick={() => void signOut()}>Sign out</Button>
              <Button onClick={() => void signOut(undefined, { everywhere: true })} title="End every session of yours, on every browser">
                <span className="hidden sm:inline">Sign out everywhere</span>
                <span className="sm:hidden">Everywhere</span>
              </Button>
            </>
          ) : null}
        </span>
      </nav>
    </header>
  );
}
