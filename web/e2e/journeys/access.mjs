// Who may do what: a Reader's view without write controls, the tenants, workers and access
// views, role assignments and Check access, identities, service principals, users, custom
// roles, and tenants created and deleted. The Reader journey creates the service principal
// `deployer` the access view journey looks for, so it comes first.

import { test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { EXTERNAL_ISSUER, WORKERS, call, until } from "../stack.mjs";
import { shoal, handler, context, admin, signIn, confirm, shot, shotAtBothSizes, TIMEOUT } from "../fixture.mjs";

test("a tenant Reader sees no other tenant, no write actions, and a refused write says 403 plainly", async () => {
  // A service principal that is Contributor when the page loads, then only Reader: the page
  // still offers Save, and the API's 403 is what the person sees.
  const sp = await call(shoal.base, admin, "PUT", "/v1/tenants/contoso/servicePrincipals/deployer");
  const contributor = randomUUID();
  const assign = (id, role) =>
    call(shoal.base, admin, "PUT", `/v1/tenants/contoso/roleAssignments/${id}`, {
      principalId: sp.principalId,
      roleDefinitionId: role,
      scope: "/tenants/contoso",
    });
  await assign(contributor, "Contributor");
  const form = new URLSearchParams({
    grant_type: "client_credentials",
    client_id: sp.clientId,
    client_secret: sp.clientSecret,
    scope: "api://shoal/.default",
  });
  const issued = await (await fetch(`${shoal.base}/oauth2/token`, { method: "POST", body: form })).json();
  assert.ok(issued.access_token, JSON.stringify(issued));

  const page = await context.newPage();
  await signIn(page, issued.access_token);
  await page.waitForURL(/\/tenants\/contoso\/apps$/);
  // The switcher fills in after the tenants list arrives: wait for it before reading it.
  await page.locator("#tenant-switcher option").first().waitFor({ state: "attached" });
  assert.deepEqual(await page.locator("#tenant-switcher option").allInnerTexts(), ["contoso"]);
  await page.goto(`${shoal.base}/tenants/fabrikam/apps`);
  await page.getByRole("alert").waitFor();
  assert.match(await page.getByRole("alert").innerText(), /Not found/);
  await page.goto(`${shoal.base}/tenants/contoso/apps/orders/functions/ship`);
  await page.getByRole("button", { name: "Save" }).waitFor();

  await call(shoal.base, admin, "DELETE", `/v1/tenants/contoso/roleAssignments/${contributor}`);
  await assign(randomUUID(), "Reader");
  // The API drops cached grants on the change's notification: wait until it sees the Reader.
  const deadline = Date.now() + TIMEOUT;
  for (;;) {
    const me = await call(shoal.base, issued.access_token, "GET", "/v1/me?tenant=contoso");
    if (!me.actions.includes("Shoal/apps/functions/write")) break;
    assert.ok(Date.now() < deadline, "the API still saw the Contributor assignment");
    await new Promise((r) => setTimeout(r, 100));
  }
  await page.locator('[data-path="bindings[0].queueName"]').fill("orders-v2");
  await page.getByRole("button", { name: "Save" }).click();
  const alert = page.locator("#fn-errors [role=alert]");
  await alert.waitFor();
  assert.match(await alert.innerText(), /^Not allowed: /);
  await shot(page, "04-reader-403");

  // Reloaded, the page no longer offers what the Reader cannot do.
  await page.reload();
  await page.locator('[data-path="bindings[0].queueName"]').waitFor();
  assert.equal(await page.getByRole("button", { name: "Save" }).count(), 0);
  assert.equal(await page.locator('[data-path="bindings[0].queueName"]').getAttribute("readonly"), "");
  await page.goto(`${shoal.base}/tenants/contoso/apps/orders`);
  await page.locator("#scale-mode").waitFor();
  assert.equal(await page.getByLabel(/Target-based scaling/).isDisabled(), true);
  assert.equal(await page.getByRole("button", { name: "Reveal values" }).count(), 0);
  // Nothing to edit or delete: the handler and limits read as facts, no settings form.
  for (const name of ["Save handler", "Save setting", "Save scale limits", "Delete orders"]) {
    assert.equal(await page.getByRole("button", { name }).count(), 0, name);
  }
  assert.equal(await page.getByRole("button", { name: /^(Change|Remove) / }).count(), 0);
  await page.getByText(handler.url).waitFor();
  await page.goto(`${shoal.base}/tenants/contoso/apps/orders/functions/ship`);
  await page.locator("#fn-health-state").waitFor();
  assert.equal(await page.getByRole("button", { name: /^(Delete|Disable) ship/ }).count(), 0);
  assert.equal(await page.getByRole("button", { name: "Send test message" }).count(), 0);
  assert.equal(await page.getByLabel("Max concurrency").getAttribute("readonly"), "");
  await page.goto(`${shoal.base}/tenants/contoso/apps`);
  await page.locator("#apps tbody tr").first().waitFor();
  assert.equal(await page.getByText("New app").count(), 0);
  await shot(page, "05-reader-apps");
  // Nor does the access view offer to assign or remove roles, or to create, change or delete
  // identities, service principals, users or roles.
  await page.goto(`${shoal.base}/tenants/contoso/access`);
  await page.getByRole("cell", { name: "deployer" }).first().waitFor();
  assert.equal(await page.getByText("Assign a role").count(), 0);
  for (const create of ["New identity", "New service principal", "New user", "New role"]) {
    assert.equal(await page.getByText(create, { exact: true }).count(), 0, create);
  }
  // The one form is Check access, which reads: a Reader may read role assignments (`*/read`).
  assert.equal(await page.locator('main form:not([aria-label="Check access"])').count(), 0);
  assert.equal(await page.getByRole("button", { name: /^(Remove|Delete|Change|New secret) / }).count(), 0);
  assert.deepEqual(await page.locator("main button").allInnerTexts(), ["Check access"]);
  await page.close();
});

test("the tenants, workers and access views load and pass the accessibility check", async () => {
  const page = await context.newPage();
  await signIn(page, admin);
  await page.waitForURL(/\/tenants$/);
  await page.getByRole("cell", { name: "Fabrikam", exact: true }).waitFor();
  await shot(page, "09-tenants");
  await page.getByRole("link", { name: "Workers" }).click();
  await page.getByRole("heading", { name: "Workers", level: 1 }).waitFor();
  for (const worker of WORKERS) {
    const row = page.getByRole("row").filter({ has: page.getByRole("cell", { name: worker, exact: true }) });
    await row.getByText("alive", { exact: true }).waitFor();
  }
  await shot(page, "10-workers");
  await page.goto(`${shoal.base}/tenants/contoso/access`);
  await page.getByRole("cell", { name: "deployer" }).first().waitFor();
  await page.getByRole("cell", { name: "Function Invoker" }).waitFor();
  await page.getByRole("cell", { name: "Shoal/apps/functions/write" }).first().waitFor();
  await shot(page, "11-access");
  await page.close();
});

test("an owner assigns a role from the access view, sees a bad scope at its field, and removes it", async () => {
  const sp = await call(shoal.base, admin, "PUT", "/v1/tenants/contoso/servicePrincipals/auditor");
  const assignmentsOf = async () =>
    (await call(shoal.base, admin, "GET", "/v1/tenants/contoso/roleAssignments")).items.filter(
      (a) => a.principalId === sp.principalId,
    );
  const page = await context.newPage();
  await signIn(page, admin);
  await page.goto(`${shoal.base}/tenants/contoso/access`);
  await page.getByText("Assign a role", { exact: true }).first().click();
  await page.getByLabel("Principal", { exact: true }).selectOption(sp.principalId);
  await page.getByLabel("Role", { exact: true }).selectOption("Reader");
  await page.getByLabel("Scope", { exact: true }).fill("/tenants/fabrikam");
  await page.getByRole("button", { name: "Assign", exact: true }).click();
  await page.locator('#assign-scope[aria-invalid="true"]').waitFor();
  assert.match(await page.locator("#assign-scope-error").innerText(), /\/tenants\/contoso/);
  assert.deepEqual(await assignmentsOf(), []);
  await shot(page, "13-access-assign-422");

  await page.getByLabel("Scope", { exact: true }).fill("/tenants/contoso/apps/orders");
  await page.getByRole("button", { name: "Assign", exact: true }).click();
  const row = page.locator("#assignments ~ * tr, section[aria-labelledby=assignments] tr").filter({ hasText: "auditor" });
  await row.filter({ hasText: "/tenants/contoso/apps/orders" }).waitFor();
  const [assigned] = await assignmentsOf();
  assert.equal(assigned.roleDefinitionName, "Reader");
  assert.equal(assigned.scope, "/tenants/contoso/apps/orders");
  await shot(page, "14-access-assigned");

  // Check access: what auditor may do at the app, and through which assignment; nothing at
  // the tenant, said in words; a scope outside the tenant is refused at its field.
  const check = page.locator("section[aria-labelledby=check]");
  await check.getByLabel("Principal to check").selectOption(sp.principalId);
  await check.getByLabel("Scope to check").fill("/tenants/contoso/apps/orders");
  await check.getByRole("button", { name: "Check access" }).click();
  await page.locator("#check-summary").getByText(/^auditor \(servicePrincipal\) may take \d+ management actions at \/tenants\/contoso\/apps\/orders, through 1 role assignment\.$/).waitFor();
  const group = check.locator(".check-group").filter({ hasText: "Reader, assigned at /tenants/contoso/apps/orders (here)" });
  await group.getByText("Shoal/apps/read", { exact: true }).waitFor();
  assert.equal(await group.getByText("Shoal/apps/write", { exact: true }).count(), 0);
  await shotAtBothSizes(page, "14-access-check");
  await check.getByLabel("Scope to check").fill("/tenants/contoso");
  await check.getByRole("button", { name: "Check access" }).click();
  await page
    .locator("#check-summary")
    .getByText("auditor (servicePrincipal) has no role assignment at /tenants/contoso or above it, so it may do nothing there.")
    .waitFor();
  assert.equal(await check.locator(".check-group").count(), 0);
  await check.getByLabel("Scope to check").fill("/tenants/fabrikam");
  await check.getByRole("button", { name: "Check access" }).click();
  await page.locator('#check-scope[aria-invalid="true"]').waitFor();
  assert.match(await page.locator("#check-scope-error").innerText(), /\/tenants\/contoso/);

  // Removing asks first: Cancel keeps it.
  await page.getByRole("button", { name: /^Remove Reader of auditor/ }).click();
  await confirm(page, "Cancel");
  assert.equal((await assignmentsOf()).length, 1);
  await page.getByRole("button", { name: /^Remove Reader of auditor/ }).click();
  await confirm(page, "Remove");
  await row.waitFor({ state: "detached" });
  assert.deepEqual(await assignmentsOf(), []);
  await page.close();
});

test("an administrator creates an identity, a service principal, a user and a custom role, assigns it and deletes them", async () => {
  const list = async (collection) =>
    (await call(shoal.base, admin, "GET", `/v1/tenants/contoso/${collection}`)).items.map((i) => i.name);
  const page = await context.newPage();
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: shoal.base });
  await page.setViewportSize({ width: 1366, height: 768 });
  await signIn(page, admin);
  await page.goto(`${shoal.base}/tenants/contoso/access`);
  const said = page.locator("#access-said");
  const section = (id) => page.locator(`section[aria-labelledby=${id}]`);

  // An identity: a bad name is refused at its field, then one is made.
  await page.getByText("New identity", { exact: true }).first().click();
  await page.getByLabel("Identity name").fill("Orders MI");
  await page.getByRole("button", { name: "Create identity" }).click();
  await page.locator('#new-identity-name[aria-invalid="true"]').waitFor();
  assert.notEqual((await page.locator("#new-identity-name-error").innerText()).trim(), "");
  await page.getByLabel("Identity name").fill("orders-mi");
  await page.getByRole("button", { name: "Create identity" }).click();
  await said.getByText("Created the identity orders-mi.").waitFor();
  await section("identities").getByRole("cell", { name: "orders-mi", exact: true }).waitFor();
  // Focus is on the section written, not lost with the form.
  assert.equal(await page.evaluate(() => document.activeElement?.id), "identities");
  assert.ok((await list("identities")).includes("orders-mi"));
  // The same name again says it is taken (the API's PUT read the existing one back).
  await page.getByText("New identity", { exact: true }).first().click();
  await page.getByLabel("Identity name").fill("orders-mi");
  await page.getByRole("button", { name: "Create identity" }).click();
  await page.locator('#new-identity-name[aria-invalid="true"]').waitFor();
  assert.match(await page.locator("#new-identity-name-error").innerText(), /An identity named orders-mi exists already/);

  // A service principal: its secret is shown once, with a copy button, and it works.
  await page.getByText("New service principal", { exact: true }).first().click();
  await page.getByLabel("Service principal name").fill("ci-deploy");
  await page.getByRole("button", { name: "Create service principal" }).click();
  const dialog = page.getByRole("dialog", { name: "Secret of ci-deploy" });
  await dialog.waitFor();
  await dialog.getByText("it will not be shown again").waitFor();
  const secret = await dialog.getByLabel("Client secret").inputValue();
  assert.match(secret, /^shoal_sp_/);
  await dialog.getByRole("button", { name: "Copy secret" }).click();
  await dialog.getByText("Copied to the clipboard.").waitFor();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), secret);
  await shot(page, "14-access-secret-once", { anyImpact: true });
  const sp = (await call(shoal.base, admin, "GET", "/v1/tenants/contoso/servicePrincipals/ci-deploy"));
  const issued = await (
    await fetch(`${shoal.base}/oauth2/token`, {
      method: "POST",
      body: new URLSearchParams({ grant_type: "client_credentials", client_id: sp.clientId, client_secret: secret, scope: "api://shoal/.default" }),
    })
  ).json();
  assert.ok(issued.access_token, JSON.stringify(issued));
  await dialog.getByRole("button", { name: "Done" }).click();
  await dialog.waitFor({ state: "detached" });
  await section("sps").getByRole("cell", { name: "ci-deploy", exact: true }).waitFor();
  // Closed, the secret is nowhere in the page.
  assert.equal((await page.content()).includes(secret), false);

  // A user: an issuer Shoal does not trust is refused at its field, naming the one it does.
  await page.getByText("New user", { exact: true }).first().click();
  await page.getByLabel("User name").fill("ann");
  await page.getByLabel("Issuer").fill("https://login.elsewhere.example/");
  await page.getByLabel("Subject").fill("ann-oid");
  await page.getByRole("button", { name: "Create user" }).click();
  await page.locator('#new-user-issuer[aria-invalid="true"]').waitFor();
  assert.ok((await page.locator("#new-user-issuer-error").innerText()).includes(EXTERNAL_ISSUER));
  await shot(page, "14-access-user-422", { anyImpact: true });
  await page.getByLabel("Issuer").fill(EXTERNAL_ISSUER);
  await page.getByRole("button", { name: "Create user" }).click();
  await section("users").getByRole("cell", { name: "ann", exact: true }).waitFor();
  assert.ok((await list("users")).includes("ann"));

  // A custom role: an entry the API refuses is said at its list, with its line.
  await page.getByText("New role", { exact: true }).first().click();
  await page.getByLabel("Role name").fill("Order Reader");
  await page.getByLabel("Actions", { exact: true }).fill("Shoal/apps/read\nApps/read");
  await page.getByRole("button", { name: "Create role" }).click();
  await page.locator('#role-permissions-actions[aria-invalid="true"]').waitFor();
  assert.match(await page.locator("#role-permissions-actions-error").innerText(), /^line 2 \(Apps\/read\): /);
  await page.getByLabel("Actions", { exact: true }).fill("Shoal/apps/read\nShoal/apps/functions/read");
  await page.getByRole("button", { name: "Create role" }).click();
  await said.getByText("Created the role Order Reader.").waitFor();
  const role = (await call(shoal.base, admin, "GET", "/v1/tenants/contoso/roleDefinitions/Order%20Reader"));
  assert.deepEqual(role.permissions.actions, ["Shoal/apps/read", "Shoal/apps/functions/read"]);
  assert.deepEqual(role.assignableScopes, ["/tenants/contoso"]);
  // Changed: the form opens with what it holds, its name fixed.
  await page.getByRole("button", { name: "Change role Order Reader" }).click();
  assert.equal(await page.getByLabel("Role name").getAttribute("readonly"), "");
  assert.equal(await page.getByLabel("Actions", { exact: true }).inputValue(), "Shoal/apps/read\nShoal/apps/functions/read");
  await page.getByLabel("Description").fill("Reads apps and their functions");
  await page.getByRole("button", { name: "Save role" }).click();
  await said.getByText("Saved the role Order Reader.").waitFor();
  assert.equal((await call(shoal.base, admin, "GET", "/v1/tenants/contoso/roleDefinitions/Order%20Reader")).description, "Reads apps and their functions");

  // Assigned to the new service principal.
  await page.getByText("Assign a role", { exact: true }).first().click();
  await page.getByLabel("Principal", { exact: true }).selectOption(sp.principalId);
  await page.getByLabel("Role", { exact: true }).selectOption("Order Reader");
  await page.getByRole("button", { name: "Assign", exact: true }).click();
  await section("assignments").getByRole("row").filter({ hasText: "ci-deploy" }).filter({ hasText: "Order Reader" }).waitFor();

  // Every form open, the view passes axe at both sizes.
  await page.evaluate(() => document.querySelectorAll("main details").forEach((d) => { d.open = true; }));
  await shotAtBothSizes(page, "14-access-manage");

  // An assigned role is not deleted: the confirmation says so, and the API's 409 is shown.
  await page.getByRole("button", { name: "Delete role Order Reader" }).click();
  await page.getByRole("dialog").getByText("assigned once").waitFor();
  await confirm(page, "Delete");
  await section("roles").getByRole("alert").waitFor();
  assert.match(await section("roles").getByRole("alert").innerText(), /^Not possible as things stand: /);

  // Then everything goes, each after asking; Cancel keeps it.
  await page.getByRole("button", { name: /^Remove Order Reader of ci-deploy/ }).click();
  await confirm(page, "Remove");
  await said.getByText(/^Removed Order Reader of ci-deploy/).waitFor();
  await page.getByRole("button", { name: "Delete role Order Reader" }).click();
  await confirm(page, "Cancel");
  assert.ok((await list("roleDefinitions")).includes("Order Reader"));
  await page.getByRole("button", { name: "Delete role Order Reader" }).click();
  await confirm(page, "Delete");
  await said.getByText("Deleted the role Order Reader.").waitFor();
  await page.getByRole("button", { name: "Delete user ann" }).click();
  await confirm(page, "Delete");
  await said.getByText("Deleted the user ann.").waitFor();
  await page.getByRole("button", { name: "Delete service principal ci-deploy" }).click();
  await page.getByRole("dialog").getByText("stop working at once").waitFor();
  await confirm(page, "Delete");
  await said.getByText("Deleted the service principal ci-deploy.").waitFor();
  await page.getByRole("button", { name: "Delete identity orders-mi" }).click();
  await confirm(page, "Delete");
  await said.getByText("Deleted the identity orders-mi.").waitFor();
  assert.ok(!(await list("roleDefinitions")).includes("Order Reader"));
  assert.ok(!(await list("users")).includes("ann"));
  assert.ok(!(await list("servicePrincipals")).includes("ci-deploy"));
  assert.ok(!(await list("identities")).includes("orders-mi"));
  // The deleted service principal's token no longer works.
  const refused = await fetch(`${shoal.base}/v1/me`, { headers: { Authorization: `Bearer ${issued.access_token}` } });
  assert.equal(refused.status, 401);
  await page.close();
});

test("a platform administrator creates a tenant and deletes it after asking", async () => {
  const names = async () => (await call(shoal.base, admin, "GET", "/v1/tenants")).items.map((t) => t.name);
  const page = await context.newPage();
  await page.setViewportSize({ width: 1366, height: 768 });
  await signIn(page, admin);
  await page.waitForURL(/\/tenants$/);
  await page.getByText("New tenant", { exact: true }).first().click();
  // A taken name is said at the field (create only: the existing tenant is not replaced).
  await page.getByLabel("Tenant name").fill("contoso");
  await page.getByRole("button", { name: "Create tenant" }).click();
  await page.locator('#new-tenant-name[aria-invalid="true"]').waitFor();
  assert.match(await page.locator("#new-tenant-name-error").innerText(), /A tenant named contoso exists already/);
  assert.equal((await call(shoal.base, admin, "GET", "/v1/tenants/contoso")).displayName, "Contoso");
  await page.getByLabel("Tenant name").fill("Tailspin Toys");
  await page.getByRole("button", { name: "Create tenant" }).click();
  await page.locator("#new-tenant-name-error").filter({ hasText: /\S/, hasNotText: /exists already/ }).waitFor();
  await shotAtBothSizes(page, "09-tenants-create-422");
  await page.getByLabel("Tenant name").fill("tailspin");
  await page.getByLabel("Display name").fill("Tailspin Toys");
  await page.getByRole("button", { name: "Create tenant" }).click();
  await page.locator("#tenants-said").getByText("Created the tenant tailspin.").waitFor();
  await page.getByRole("cell", { name: "Tailspin Toys", exact: true }).waitFor();
  assert.ok((await names()).includes("tailspin"));
  // The header's switcher lists it too.
  await page.locator("#tenant-switcher option", { hasText: "tailspin" }).waitFor({ state: "attached" });

  await page.getByRole("button", { name: "Delete tenant tailspin" }).click();
  await page.getByRole("dialog").getByText("This cannot be undone").waitFor();
  await confirm(page, "Cancel");
  assert.ok((await names()).includes("tailspin"));
  await page.getByRole("button", { name: "Delete tenant tailspin" }).click();
  await confirm(page, "Delete tenant");
  await page.locator("#tenants-said").getByText("Deleted the tenant tailspin.").waitFor();
  await page.getByRole("cell", { name: "Tailspin Toys", exact: true }).waitFor({ state: "detached" });
  assert.ok(!(await names()).includes("tailspin"));
  await page.close();
});
