import { describe, expect, it } from "vitest";
import type { Schemas } from "../../api/client";
import { entries, roleBody, roleDeletionDetail, roleErrors, roleTaken, roleValues } from "./roles-model";

type Role = Schemas["RoleDefinitionView"];

const role = (over: Partial<Role>): Role => ({
  id: "00000000-0000-4000-8000-000000000001",
  name: "Order Reader",
  description: "Reads orders",
  builtIn: false,
  permissions: { actions: ["Shoal/apps/read", "Shoal/apps/functions/read"], dataActions: [] },
  assignableScopes: ["/tenants/contoso/apps/orders"],
  createdAt: "2026-01-01T00:00:00Z",
  updatedAt: "2026-01-01T00:00:00Z",
  ...over,
});

describe("entries", () => {
  it("takes one entry a line or between commas, trimmed, without blanks", () => {
    expect(entries(" Shoal/apps/read \n\n*/read, Shoal/apps/functions/read ,\n")).toEqual([
      "Shoal/apps/read",
      "*/read",
      "Shoal/apps/functions/read",
    ]);
    expect(entries("")).toEqual([]);
    expect(entries(" \n , ")).toEqual([]);
  });
});

describe("roleBody", () => {
  it("sends every list and the trimmed description, never the name (the path has it)", () => {
    const values = roleValues("contoso");
    values.description = "  Reads things ";
    values.lists["permissions.actions"] = "*/read\nShoal/apps/write";
    values.lists["permissions.notDataActions"] = "Shoal/apps/functions/invoke/action";
    expect(roleBody(values)).toEqual({
      description: "Reads things",
      permissions: {
        actions: ["*/read", "Shoal/apps/write"],
        notActions: [],
        dataActions: [],
        notDataActions: ["Shoal/apps/functions/invoke/action"],
      },
      assignableScopes: ["/tenants/contoso"],
    });
  });
});

describe("roleValues", () => {
  it("starts a new role assignable in the whole tenant", () => {
    const values = roleValues("contoso");
    expect(values.name).toBe("");
    expect(values.lists.assignableScopes).toBe("/tenants/contoso");
    expect(values.lists["permissions.actions"]).toBe("");
  });

  it("fills the form from a role, one entry a line, and round-trips to the same body", () => {
    const r = role({});
    const values = roleValues("contoso", r);
    expect(values.name).toBe("Order Reader");
    expect(values.lists["permissions.actions"]).toBe("Shoal/apps/read\nShoal/apps/functions/read");
    expect(roleBody(values)).toEqual({
      description: "Reads orders",
      permissions: { actions: r.permissions.actions, notActions: [], dataActions: [], notDataActions: [] },
      assignableScopes: r.assignableScopes,
    });
  });
});

describe("roleErrors", () => {
  const sent = roleBody({
    ...roleValues("contoso"),
    lists: { ...roleValues("contoso").lists, "permissions.actions": "Shoal/apps/read\nApps/read", assignableScopes: "/tenants/fabrikam" },
  });

  it("says an entry's error at its list, with its line and what was on it", () => {
    expect(
      roleErrors(
        [
          { path: "permissions.actions[1]", message: 'must start with "Shoal/"' },
          { path: "assignableScopes[0]", message: "must lie within this tenant" },
        ],
        sent,
      ),
    ).toEqual([
      { path: "permissions.actions", message: 'line 2 (Apps/read): must start with "Shoal/"' },
      { path: "assignableScopes", message: "line 1 (/tenants/fabrikam): must lie within this tenant" },
    ]);
  });

  it("puts an error on the permissions as a whole at Actions", () => {
    expect(roleErrors([{ path: "permissions", message: "must grant something" }], sent)).toEqual([
      { path: "permissions.actions", message: "must grant something" },
    ]);
  });

  it("keeps other errors as they came, and an index beyond what was sent without its entry", () => {
    expect(roleErrors([{ path: "name", message: "is a built-in role" }, { path: "description", message: "too long" }], sent)).toEqual([
      { path: "name", message: "is a built-in role" },
      { path: "description", message: "too long" },
    ]);
    expect(roleErrors([{ path: "permissions.dataActions[4]", message: "bad" }], sent)).toEqual([
      { path: "permissions.dataActions", message: "line 5: bad" },
    ]);
    expect(roleErrors([{ path: "bindings[0]", message: "odd" }], sent)).toEqual([{ path: "bindings[0]", message: "odd" }]);
  });
});

describe("roleTaken", () => {
  const roles = [role({ name: "Reader", builtIn: true }), role({ name: "Order Reader" })];

  it("refuses a built-in role's name and a custom role's, whatever the case", () => {
    expect(roleTaken(roles, "reader")).toBe("Reader is a built-in role: choose another name.");
    expect(roleTaken(roles, " order reader ")).toBe("A role named Order Reader exists already: choose another name, or Change that one.");
  });

  it("accepts a new name", () => {
    expect(roleTaken(roles, "Order Writer")).toBeNull();
  });
});

describe("roleDeletionDetail", () => {
  it("says the API refuses while the role is assigned", () => {
    expect(roleDeletionDetail("Order Reader", 1)).toMatch(/assigned once: the API refuses/);
    expect(roleDeletionDetail("Order Reader", 2)).toMatch(/assigned 2 times/);
  });

  it("says what deleting an unassigned role does", () => {
    expect(roleDeletionDetail("Order Reader", 0)).toBe("Nobody can be given Order Reader afterwards. This cannot be undone.");
    expect(roleDeletionDetail("Order Reader", null)).toBe("Nobody can be given Order Reader afterwards. This cannot be undone.");
  });
});
