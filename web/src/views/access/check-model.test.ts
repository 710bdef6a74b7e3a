import { describe, expect, it } from "vitest";
import { checkGroups, checkSummary, scopeChoices, type AccessCheck } from "./check-model";

const principal = {
  name: "worker",
  kind: "servicePrincipal",
  principalId: "11111111-1111-4111-8111-111111111111",
  clientId: "22222222-2222-4222-8222-222222222222",
  createdAt: "2026-01-01T00:00:00Z",
  updatedAt: "2026-01-01T00:00:00Z",
};
const APP = "/tenants/contoso/apps/orders";
const reader = {
  id: "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa",
  roleDefinitionId: "bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb",
  roleDefinitionName: "Reader",
  scope: "/tenants/contoso",
  actions: ["Shoal/apps/read", "Shoal/apps/functions/read"],
  dataActions: [],
};
const invoker = {
  id: "cccccccc-cccc-4ccc-8ccc-cccccccccccc",
  roleDefinitionId: "dddddddd-dddd-4ddd-8ddd-dddddddddddd",
  roleDefinitionName: "Function Invoker",
  scope: APP,
  actions: [],
  dataActions: ["Shoal/apps/functions/invoke/action"],
};

function check(assignments: AccessCheck["assignments"]): AccessCheck {
  const per = (data: boolean) => {
    const names = [...new Set(assignments.flatMap((a) => (data ? a.dataActions : a.actions)))];
    return names.map((action) => ({
      action,
      grantedBy: assignments.filter((a) => (data ? a.dataActions : a.actions).includes(action)).map((a) => a.id),
    }));
  };
  return { principal, scope: APP, actions: per(false), dataActions: per(true), assignments };
}

describe("scopeChoices", () => {
  it("offers the tenant, then the scopes inside it the assignments name, once each, sorted", () => {
    expect(
      scopeChoices("contoso", [`${APP}/functions/process`, "/tenants/contoso", APP, APP, "/tenants/fabrikam/apps/x"]),
    ).toEqual(["/tenants/contoso", APP, `${APP}/functions/process`]);
    expect(scopeChoices("contoso", [])).toEqual(["/tenants/contoso"]);
  });
});

describe("checkSummary", () => {
  it("says plainly when no assignment applies", () => {
    expect(checkSummary(check([]), "worker")).toBe(
      `worker has no role assignment at ${APP} or above it, so it may do nothing there.`,
    );
  });
  it("says when the assignments that apply allow nothing", () => {
    const nothing = { ...reader, actions: [], dataActions: [] };
    expect(checkSummary(check([nothing]), "worker")).toBe(`worker's 1 role assignment at ${APP} or above it allow no action there.`);
  });
  it("counts management and data actions and the assignments", () => {
    expect(checkSummary(check([reader]), "worker")).toBe(`worker may take 2 management actions at ${APP}, through 1 role assignment.`);
    expect(checkSummary(check([reader, invoker]), "worker")).toBe(
      `worker may take 2 management actions and 1 data action at ${APP}, through 2 role assignments.`,
    );
    expect(checkSummary(check([invoker]), "worker")).toBe(`worker may take 1 data action at ${APP}, through 1 role assignment.`);
  });
});

describe("checkGroups", () => {
  it("groups the actions by the assignment granting them, inherited or made here", () => {
    expect(checkGroups(check([reader, invoker]))).toEqual([
      {
        id: reader.id,
        heading: "Reader, assigned at /tenants/contoso (inherited)",
        actions: ["Shoal/apps/read", "Shoal/apps/functions/read"],
        none: null,
      },
      {
        id: invoker.id,
        heading: `Function Invoker, assigned at ${APP} (here)`,
        actions: ["Shoal/apps/functions/invoke/action (data action)"],
        none: null,
      },
    ]);
  });
  it("says when an assignment grants nothing at the scope", () => {
    const custom = { ...reader, roleDefinitionName: "Auditor", actions: [], dataActions: [] };
    expect(checkGroups(check([custom]))[0].none).toBe(`Auditor allows nothing at ${APP}.`);
  });
});
