import path from "node:path";
import { expect, test } from "@playwright/test";
import { startGenserve, tempDir, writeConfig, type GenserveServer } from "../test/helpers/genserve";
import { startTestProvider } from "../test/helpers/oidc-provider";

/**
 * Sign-in with SSO in the browser (issue 34): a server of its own configured with a real OpenID
 * provider on loopback (oidc-provider); the person clicks "Sign in with Test IdP", signs in and
 * consents at the provider, and lands back signed in, where they started.
 */
let idp: Awaited<ReturnType<typeof startTestProvider>>;
let server: GenserveServer;

test.beforeAll(async () => {
  test.setTimeout(240_000);
  idp = await startTestProvider({ ana: { email: "ana@example.com", groups: ["gs-admins"] } });
  const dir = tempDir("genserve-e2e-sso-");
  const config = writeConfig(
    dir,
    `
auth:
  oidc:
    issuer: ${idp.issuer}
    clientId: ${idp.clientId}
    clientSecret: ${idp.clientSecret}
    name: Test IdP
    scopes: [openid, email, profile, groups]
    groupsClaim: groups
    roles: { gs-admins: admin }
`,
  );
  server = await startGenserve({ configFile: config, dataDir: path.join(dir, "data"), logLevel: "warn" });
  idp.register(`${server.url}/auth/callback`);
});

test.afterAll(async () => {
  await server?.stop();
  await idp?.close();
});

test("signs in with the identity provider and comes back signed in, where the person started", async ({ page }) => {
  await page.goto(`${server.url}/runs`);
  await page.getByRole("link", { name: "Sign in with Test IdP" }).click();
  // The provider's own pages (oidc-provider's development login and consent).
  await page.getByPlaceholder("Enter any login").fill("ana");
  await page.getByPlaceholder("and password").fill("anything");
  await page.getByRole("button", { name: "Sign-in" }).click();
  await page.getByRole("button", { name: "Continue" }).click();
  await expect(page).toHaveURL(`${server.url}/runs`);
  await expect(page.getByRole("heading", { name: "Runs" })).toBeVisible();
  await expect(page.getByRole("navigation", { name: "Main" }).getByText("ana@example.com")).toBeVisible();
  await page.getByRole("button", { name: "Sign out everywhere" }).click();
  await expect(page.getByRole("link", { name: "Sign in with Test IdP" })).toBeVisible();
});
