import { describe, expect, it } from "vitest";
import { match, paths } from "./router";

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
