// Invocation explorer: a function's invocations, successes too, newest first, searchable by
// status, message id, invocation id, trace id and time; each row expands to its attempts
// (RetryCount, DequeueCount/DeliveryCount, worker, duration, status, error, the handler's logs,
// the trace id, linked to the operator's trace viewer when one is configured) and its payload,
// decoded where it is text or JSON. "Follow new invocations" polls the first page
// every TAIL_MS (why polling rather than server-sent events: see model.ts) and says so beside
// the switch; new rows are announced in a live region, and open rows stay open.

import { api } from "../../api/client";
import { h, replace } from "../../dom";
import { problemBanner, table, when } from "../common";
import { fieldForm, type Field } from "../form";
import { decodePayload } from "../payload";
import {
  attemptsLabel,
  deliveryCountLabel,
  filterProblems,
  mergeTail,
  NO_FILTERS,
  policyText,
  queryOf,
  TAIL_MS,
  traceViewerLink,
  type Attempt,
  type Filters,
  type Invocation,
} from "./model";

interface State {
  filters: Filters;
  items: Invocation[];
  next?: string;
  /// Delivery keys of the rows whose attempts are open.
  open: Set<string>;
  tail: boolean;
  /// Bumped each time the tail is switched on: a poll loop from an earlier switch-on ends
  /// rather than run beside the new one.
  tailRun: number;
}

/// `traceViewer`: the operator's trace viewer URL template (`/dashboard/config`), if any.
export function explorerSection(tenant: string, app: string, fn: string, traceViewer: string | null): HTMLElement {
  const path = { tenant, app, function: fn };
  const state: State = { filters: { ...NO_FILTERS }, items: [], open: new Set(), tail: false, tailRun: 0 };
  const policy = h("p", { class: "hint", id: "explorer-policy" });
  const results = h("div", { id: "explorer-results" });
  const more = h("div");
  const live = h("p", { role: "status", class: "hint", id: "explorer-live" });
  const banner = h("div");

  const status = h(
    "select",
    {},
    h("option", { value: "" }, "Any"),
    h("option", { value: "succeeded" }, "Succeeded"),
    h("option", { value: "failed" }, "Failed"),
  );
  const messageId = h("input", { type: "search", autocomplete: "off" });
  const invocationId = h("input", { type: "search", autocomplete: "off", spellcheck: "false" });
  const traceId = h("input", { type: "search", autocomplete: "off", spellcheck: "false" });
  const from = h("input", { type: "datetime-local", step: 1 });
  const to = h("input", { type: "datetime-local", step: 1 });
  const fields: Field[] = [
    { path: "status", label: "Status", input: status },
    { path: "messageId", label: "Message id", input: messageId },
    { path: "invocationId", label: "Invocation id", input: invocationId, hint: "Any attempt's id" },
    { path: "traceId", label: "Trace id", input: traceId, hint: "From your trace viewer, or a whole traceparent" },
    { path: "from", label: "Started from", input: from },
    { path: "to", label: "Started before", input: to },
  ];
  const read = (): Filters => ({
    status: status.value as Filters["status"],
    messageId: messageId.value,
    invocationId: invocationId.value,
    traceId: traceId.value,
    from: from.value,
    to: to.value,
  });

  const render = () => {
    const focusedKey = (document.activeElement as HTMLElement | null)?.dataset?.key;
    replace(results, invocationTable(state, render, traceViewer));
    if (focusedKey) results.querySelector<HTMLElement>(`button[data-key="${CSS.escape(focusedKey)}"]`)?.focus();
    replace(
      more,
      state.next
        ? h("button", { type: "button", onclick: () => void loadOlder() }, "Load older invocations")
        : state.items.length
          ? h("p", { class: "hint" }, "No older invocations.")
          : null,
    );
  };

  const fetchPage = async (token?: string) => {
    const { data, error, response } = await api.GET(
      "/v1/tenants/{tenant}/apps/{app}/functions/{function}/invocationLog",
      { params: { path, query: queryOf(state.filters, token) } },
    );
    return { data, error, status: response.status };
  };

  const search = async (form?: ReturnType<typeof fieldForm>) => {
    state.filters = read();
    const problems = filterProblems(state.filters);
    if (problems.length) {
      for (const p of problems) form?.fail(p.field, p.message);
      return;
    }
    const { data, error, status: code } = await fetchPage();
    if (!data) {
      if (form && code === 422) form.refuse(error, code);
      else replace(banner, problemBanner(error, code));
      return;
    }
    replace(banner);
    state.items = data.items;
    state.next = data.continuationToken ?? undefined;
    policy.textContent = policyText(data.retention);
    render();
    const n = data.items.length;
    live.textContent = `${n} invocation${n === 1 ? "" : "s"} shown${state.next ? "; older ones load on request" : ""}.`;
  };

  const loadOlder = async () => {
    const { data, error, status: code } = await fetchPage(state.next);
    if (!data) {
      replace(banner, problemBanner(error, code));
      return;
    }
    state.items = [...state.items, ...data.items];
    state.next = data.continuationToken ?? undefined;
    render();
  };

  const form = fieldForm({
    id: "explorer",
    title: "Search invocations",
    fields,
    submit: "Search",
    extra: [
      h("button", {
        type: "button",
        onclick: () => {
          for (const f of fields) f.input.value = "";
          form.clear();
          void search();
        },
      }, "Clear"),
    ],
    onSubmit: (f) => search(f),
  });
  form.el.setAttribute("role", "search");

  const tailSwitch = h("input", { type: "checkbox", id: "explorer-tail" });
  const tailNote = h("span", { class: "hint", id: "explorer-tail-note" });
  tailSwitch.setAttribute("aria-describedby", "explorer-tail-note");
  tailSwitch.addEventListener("change", () => {
    state.tail = tailSwitch.checked;
    tailNote.textContent = state.tail ? `Checking every ${TAIL_MS / 1000} s.` : `Off; turns on polling every ${TAIL_MS / 1000} s.`;
    state.tailRun += 1;
    if (state.tail) void follow(section, state, fetchPage, render, live, tailNote);
  });
  tailNote.textContent = `Off; turns on polling every ${TAIL_MS / 1000} s.`;

  const section = h(
    "section",
    { "aria-labelledby": "explorer", id: "explorer-section" },
    h("h2", { id: "explorer" }, `Invocations: ${fn}`),
    policy,
    form.el,
    h("p", {}, tailSwitch, " ", h("label", { for: "explorer-tail" }, "Follow new invocations"), " ", tailNote),
    live,
    banner,
    results,
    more,
  );
  void search();
  return section;
}

/// The live tail: while switched on and the section is on the page, ask for the first page
/// every TAIL_MS (not while the tab is hidden) and merge it in.
async function follow(
  section: HTMLElement,
  state: State,
  fetchPage: () => Promise<{ data?: { items: Invocation[] } }>,
  render: () => void,
  live: HTMLElement,
  note: HTMLElement,
): Promise<void> {
  const run = state.tailRun;
  const current = () => state.tail && state.tailRun === run && section.isConnected;
  while (current()) {
    await new Promise((resolve) => setTimeout(resolve, TAIL_MS));
    if (!current() || document.hidden) continue;
    const { data } = await fetchPage();
    if (!data || !current()) continue;
    const merged = mergeTail(state.items, data.items);
    const changed = JSON.stringify(merged.items) !== JSON.stringify(state.items);
    state.items = merged.items;
    if (changed) render();
    if (merged.added) live.textContent = `${merged.added} new invocation${merged.added === 1 ? "" : "s"}.`;
    note.textContent = `Checking every ${TAIL_MS / 1000} s; last checked ${new Date().toLocaleTimeString()}.`;
  }
}

function invocationTable(state: State, rerender: () => void, traceViewer: string | null): HTMLElement {
  if (state.items.length === 0) return h("p", { class: "empty" }, "No invocations match.");
  const rows = state.items.flatMap((inv, n) => {
    const open = state.open.has(inv.deliveryKey);
    const detailsId = `explorer-attempts-${n}`;
    const toggle = h(
      "button",
      {
        type: "button",
        "aria-expanded": open ? "true" : "false",
        "aria-controls": detailsId,
        "data-key": inv.deliveryKey,
        onclick: () => {
          if (open) state.open.delete(inv.deliveryKey);
          else state.open.add(inv.deliveryKey);
          rerender();
        },
      },
      `${open ? "Hide" : "Show"} ${attemptsLabel(inv)}`,
    );
    const row = h(
      "tr",
      {},
      h("td", {}, when(inv.startedAt)),
      h("td", {}, h("span", { class: `status status-${inv.status}` }, inv.status)),
      h("td", {}, h("code", { class: "id" }, inv.messageId ?? inv.deliveryKey)),
      h("td", {}, when(inv.lastAttemptAt)),
      h("td", {}, toggle),
    );
    const details = h(
      "tr",
      { id: detailsId, hidden: !open },
      h("td", { colspan: 5 }, open ? invocationDetails(inv, traceViewer) : null),
    );
    return [row, details];
  });
  return h(
    "div",
    { class: "table-wrap", tabindex: 0, role: "region", "aria-label": "Invocations, newest first" },
    h(
      "table",
      {},
      h("caption", {}, "Invocations, newest first"),
      h(
        "thead",
        {},
        h("tr", {}, ["Started", "Status", "Message id", "Last attempt", "Attempts"].map((c) => h("th", { scope: "col" }, c))),
      ),
      h("tbody", {}, rows),
    ),
  );
}

function invocationDetails(inv: Invocation, traceViewer: string | null): HTMLElement {
  const payload = inv.payload === undefined || inv.payload === null ? null : decodePayload(inv.payload);
  return h(
    "div",
    { class: "invocation-details" },
    h("p", {}, "Delivery key (webhook-id): ", h("code", { class: "id" }, inv.deliveryKey)),
    payload
      ? h(
          "div",
          {},
          h("h3", {}, `Payload (${payload.kind}${inv.payloadTruncated ? ", cut short" : ""})`),
          h("pre", { class: "json", tabindex: 0 }, payload.text),
        )
      : h("p", { class: "hint" }, inv.payloadHidden ? "Payload hidden: it needs access to the app's settings." : "No payload kept."),
    table(`Attempts of ${inv.messageId ?? inv.deliveryKey}, oldest first`, [
      { label: "At", cell: (a: Attempt) => when(a.at) },
      { label: "Status", cell: (a) => a.status },
      { label: "RetryCount", cell: (a) => a.retryCount },
      { label: "Dequeue / delivery count", cell: (a) => deliveryCountLabel(a) },
      { label: "Worker", cell: (a) => a.worker },
      { label: "Duration", cell: (a) => `${a.durationMs} ms` },
      { label: "Error", cell: (a) => a.error ?? "—" },
      { label: "Logs", cell: (a) => (a.logs.length ? h("pre", { class: "logs", tabindex: 0 }, a.logs.join("\n")) : "—") },
      { label: "Invocation id", cell: (a) => h("code", { class: "id" }, a.invocationId) },
      { label: "Trace id", cell: (a) => traceCell(a, traceViewer) },
    ], inv.attempts),
  );
}

/// An attempt's trace id: a link to the trace viewer (in a new tab, sending no referrer or
/// opener) when one is configured, else the id as text to copy; "—" for attempts recorded
/// before trace ids were.
function traceCell(attempt: Attempt, traceViewer: string | null): HTMLElement | string {
  if (!attempt.traceId) return "—";
  // The attempt's own span, for finding it inside the trace.
  const id = h("code", { class: "id", title: attempt.spanId ? `Span ${attempt.spanId}` : null }, attempt.traceId);
  const href = traceViewerLink(traceViewer, attempt.traceId);
  if (!href) return id;
  return h(
    "a",
    { href, target: "_blank", rel: "noopener noreferrer", "aria-label": `Open trace ${attempt.traceId} in the trace viewer (new tab)` },
    id,
  );
}
