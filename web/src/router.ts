// Routes of the dashboard: plain paths (the server answers index.html for any of them), matched
// here to a view and its parameters.

export type Route =
  | { view: "signin" }
  | { view: "home" }
  | { view: "tenants" }
  | { view: "workers" }
  | { view: "apps"; tenant: string }
  | { view: "app"; tenant: string; app: string }
  | { view: "functions"; tenant: string; app: string; fn?: string }
  | { view: "scale"; tenant: string; app: string }
  | { view: "access"; tenant: string }
  | { view: "notFound"; path: string };

export function match(path: string): Route {
  const parts = path
    .split("/")
    .filter((p) => p !== "")
    .map(decodeURIComponent);
  const [a, b, c, d, e, f] = parts;
  switch (parts.length) {
    case 0:
      return { view: "home" };
    case 1:
      if (a === "signin") return { view: "signin" };
      if (a === "tenants") return { view: "tenants" };
      if (a === "workers") return { view: "workers" };
      break;
    case 3:
      if (a === "tenants" && c === "apps") return { view: "apps", tenant: b };
      if (a === "tenants" && c === "access") return { view: "access", tenant: b };
      break;
    case 4:
      if (a === "tenants" && c === "apps") return { view: "app", tenant: b, app: d };
      break;
    case 5:
      if (a === "tenants" && c === "apps" && e === "functions")
        return { view: "functions", tenant: b, app: d };
      if (a === "tenants" && c === "apps" && e === "scale")
        return { view: "scale", tenant: b, app: d };
      break;
    case 6:
      if (a === "tenants" && c === "apps" && e === "functions")
        return { view: "functions", tenant: b, app: d, fn: f };
      break;
  }
  return { view: "notFound", path };
}

const seg = encodeURIComponent;

export const paths = {
  apps: (tenant: string) => `/tenants/${seg(tenant)}/apps`,
  app: (tenant: string, app: string) => `/tenants/${seg(tenant)}/apps/${seg(app)}`,
  functions: (tenant: string, app: string) => `/tenants/${seg(tenant)}/apps/${seg(app)}/functions`,
  fn: (tenant: string, app: string, fn: string) =>
    `/tenants/${seg(tenant)}/apps/${seg(app)}/functions/${seg(fn)}`,
  scale: (tenant: string, app: string) => `/tenants/${seg(tenant)}/apps/${seg(app)}/scale`,
  access: (tenant: string) => `/tenants/${seg(tenant)}/access`,
};

/// The tab's title for a view: the view first (what a tab strip or history list shows when
/// cut short), then Shoal and the environment.
export function titleOf(route: Route, environment: string): string {
  const view = (() => {
    switch (route.view) {
      case "signin":
        return "Sign in";
      case "home":
        return "Home";
      case "tenants":
        return "Tenants";
      case "workers":
        return "Workers";
      case "apps":
        return `Apps · ${route.tenant}`;
      case "app":
        return `${route.app} · ${route.tenant}`;
      case "functions":
        return route.fn ? `${route.fn} · ${route.app} functions` : `Functions · ${route.app}`;
      case "scale":
        return `Scale · ${route.app}`;
      case "access":
        return `Access · ${route.tenant}`;
      case "notFound":
        return "Not found";
    }
  })();
  return `${view} · Shoal (${environment})`;
}
