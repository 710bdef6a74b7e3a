// The dashboard's shell: sign-in, the header (environment, tenant switcher, navigation) and the
// view the path names. Views load their own data. On every route the tab's title names the
// view and focus moves to the view's heading (a screen reader announces where it landed, and
// the keyboard starts from there), as a page load would; the skip link moves focus the same
// way without rendering anything again.

import "./style.css";
import { api, whenUnauthorized } from "./api/client";
import type { Caller, Context } from "./context";
import { h, replace } from "./dom";
import { match, paths, titleOf, type Route } from "./router";
import { signOut, token } from "./session";
import { header } from "./views/header";
import { problemBanner, loading } from "./views/common";
import { renderSignIn, type DashboardConfig } from "./views/signin/signin";
import { renderApps } from "./views/apps/list";
import { renderApp } from "./views/app/app";
import { renderFunctions } from "./views/functions/functions";
import { renderScale } from "./views/scale/scale";
import { renderWorkers } from "./views/workers/workers";
import { renderAccess } from "./views/access/access";
import { renderTenants } from "./views/tenants/tenants";

const root = document.getElementById("app") as HTMLElement;
let config: DashboardConfig = { environment: null, devSignIn: false };

function navigate(path: string): void {
  if (path !== location.pathname + location.search) history.pushState(null, "", path);
  void render();
}

whenUnauthorized(() => {
  signOut();
  if (location.pathname !== "/signin") {
    history.pushState(null, "", `/signin?expired=1&next=${encodeURIComponent(location.pathname)}`);
    void render();
  }
});

function tenantOf(route: Route): string | undefined {
  return "tenant" in route ? route.tenant : undefined;
}

async function loadCaller(tenant: string | undefined): Promise<Caller | { error: unknown; status: number }> {
  const { data, error, response } = await api.GET("/v1/me", {
    params: { query: tenant ? { tenant } : {} },
  });
  return data ?? { error, status: response.status };
}

let generation = 0;

async function render(): Promise<void> {
  const mine = ++generation;
  const route = match(location.pathname);
  const environment = config.environment ?? location.host;
  document.title = titleOf(route, environment);
  if (route.view === "signin" || !token()) {
    if (route.view !== "signin") history.replaceState(null, "", `/signin?next=${encodeURIComponent(location.pathname)}`);
    renderSignIn(root, config, environment, () => {
      const next = new URLSearchParams(location.search).get("next");
      navigate(next && next.startsWith("/") && !next.startsWith("//") ? next : "/");
    });
    focusHeading(root);
    return;
  }
  replace(root, loading("your access"));
  const caller = await loadCaller(tenantOf(route));
  if (mine !== generation) return;
  if ("error" in caller) {
    if (caller.status === 401) return; // whenUnauthorized took over
    replace(root, problemBanner(caller.error, caller.status));
    return;
  }
  if (route.view === "home") {
    navigate(caller.tenant ? paths.apps(caller.tenant) : "/tenants");
    return;
  }
  const ctx: Context = {
    caller,
    environment,
    traceViewerUrl: config.traceViewerUrl ?? null,
    navigate,
    refresh: () => void render(),
  };
  const main = h("main", { id: "main", tabindex: "-1" });
  const skip = h(
    "a",
    {
      class: "skip",
      href: "#main",
      // Not a navigation: a changed hash would be a history entry (and a popstate, which
      // renders the route again).
      onclick: (event: Event) => {
        event.preventDefault();
        focusHeading(main);
      },
    },
    "Skip to content",
  );
  replace(root, skip, await header(ctx, route), main);
  if (mine !== generation) return;
  // Every view puts its heading in `main` before it first waits for data, and keeps it.
  const view = renderView(ctx, main, route, () => mine === generation);
  focusHeading(main);
  await view;
}

function renderView(ctx: Context, main: HTMLElement, route: Route, stillShown: () => boolean): Promise<void> {
  switch (route.view) {
    case "apps":
      return renderApps(ctx, main, route.tenant);
    case "app":
      return renderApp(ctx, main, route.tenant, route.app);
    case "functions":
      return renderFunctions(ctx, main, route.tenant, route.app, route.fn);
    case "scale":
      return renderScale(ctx, main, route.tenant, route.app, stillShown);
    case "workers":
      return renderWorkers(ctx, main);
    case "access":
      return renderAccess(ctx, main, route.tenant);
    case "tenants":
      return renderTenants(ctx, main);
    case "notFound":
      replace(main, h("h1", {}, "Not found"), h("p", {}, `Nothing lives at ${route.path}.`));
      return Promise.resolve();
    case "signin":
    case "home":
      return Promise.resolve();
  }
}

/// Focus on the view's heading (focusable by script only), else on `main` itself.
function focusHeading(main: HTMLElement): void {
  const heading = main.querySelector("h1");
  const target = heading ?? main;
  if (heading) heading.setAttribute("tabindex", "-1");
  target.focus();
}

document.addEventListener("click", (event) => {
  const target = event.target instanceof Element ? event.target.closest("a[data-route]") : null;
  if (!target || event.defaultPrevented || event.button !== 0) return;
  if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  event.preventDefault();
  navigate(target.getAttribute("href") ?? "/");
});
window.addEventListener("popstate", () => void render());

async function start(): Promise<void> {
  try {
    const response = await fetch("/dashboard/config");
    if (response.ok) config = (await response.json()) as DashboardConfig;
  } catch {
    // An API without the dashboard's endpoint: paste a token, show the host.
  }
  await render();
}

void start();
