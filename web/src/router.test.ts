import { describe, expect, it } from "vitest";
import { match, paths, titleOf } from "./router";

describe("match", () => {
  it.each([
    ["/", { view: "home" }],
    ["/signin", { view: "signin" }],
    ["/tenants", { view: "tenants" }],
    ["/workers", { view: "workers" }],
    ["/tenants/contoso/apps", { view: "apps", tenant: "contoso" }],
    ["/tenants/contoso/apps/orders", { view: "app", tenant: "contoso", app: "orders" }],
    ["/tenants/contoso/apps/orders/", { view: "app", tenant: "contoso", app: "orders" }],
    ["/tenants/contoso/apps/orders/functions", { view: "functions", tenant: "contoso", app: "orders" }],
    [
      "/tenants/contoso/apps/orders/functions/ship",
      { view: "functions", tenant: "contoso", app: "orders", fn: "ship" },
    ],
    ["/tenants/contoso/apps/orders/scale", { view: "scale", tenant: "contoso", app: "orders" }],
    ["/tenants/contoso/access", { view: "access", tenant: "contoso" }],
    ["/tenants/contoso/nope", { view: "notFound", path: "/tenants/contoso/nope" }],
    ["/nope", { view: "notFound", path: "/nope" }],
  ])("%s", (path, route) => {
    expect(match(path)).toEqual(route);
  });

  it("round-trips names that need escaping", () => {
    expect(match(paths.fn("a b", "c/d", "e"))).toEqual({
      view: "functions",
      tenant: "a b",
      app: "c/d",
      fn: "e",
    });
  });
});

describe("titleOf", () => {
  it.each([
    ["/tenants/contoso/apps", "Apps · contoso · Shoal (dev)"],
    ["/tenants/contoso/apps/orders", "orders · contoso · Shoal (dev)"],
    ["/tenants/contoso/apps/orders/functions", "Functions · orders · Shoal (dev)"],
    ["/tenants/contoso/apps/orders/functions/ship", "ship · orders functions · Shoal (dev)"],
    ["/tenants/contoso/apps/orders/scale", "Scale · orders · Shoal (dev)"],
    ["/tenants/contoso/access", "Access · contoso · Shoal (dev)"],
    ["/workers", "Workers · Shoal (dev)"],
    ["/nope", "Not found · Shoal (dev)"],
  ])("%s → %s", (path, title) => {
    expect(titleOf(match(path), "dev")).toBe(title);
  });
  it("differs for every view", () => {
    const paths = ["/signin", "/tenants", "/workers", "/tenants/t/apps", "/tenants/t/apps/a", "/tenants/t/apps/a/functions", "/tenants/t/apps/a/scale", "/tenants/t/access"];
    expect(new Set(paths.map((p) => titleOf(match(p), "dev"))).size).toBe(paths.length);
  });
});
