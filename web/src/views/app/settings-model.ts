// What the settings editor sends and how it reads the answer, kept apart from the DOM so it can
// be tested: merge patches of `appSettings` (RFC 7396: `null` removes a setting), whether the API
// masked a value, and which settings a binding's `connection` would be found in.

/// How the API shows a secret value (and every value to a caller who may not list settings).
export const MASK = "********";

/// The merge patch that sets one setting.
export function setPatch(name: string, value: string): { appSettings: Record<string, string> } {
  return { appSettings: { [name]: value } };
}

/// The merge patch that removes one setting.
export function removePatch(name: string): { appSettings: Record<string, null> } {
  return { appSettings: { [name]: null } };
}

/// A setting name as the API takes it: letters, digits, `_`, `.`, `-` and `:` (the `__` of an
/// identity-based connection is two underscores); checked here only so an empty name or one
/// with spaces is said before a round trip. The API's 422 stays the authority.
export function settingNameProblem(name: string): string | null {
  if (name === "") return "Give the setting a name.";
  if (/\s/.test(name)) return "A setting name has no spaces.";
  return null;
}

/// Whether the API answered a value masked: secret for a caller who may list settings.
export function isMasked(value: string | undefined): boolean {
  return value === MASK;
}

/// After a save of a setting the person marked secret: `null` when the API masks it, else what
/// to tell them (the API decides what is secret, from the name and the value; it shows the rest
/// in the clear to anyone who may list settings).
export function secretNotMasked(name: string, shown: string | undefined): string | null {
  if (shown === undefined || isMasked(shown)) return null;
  return (
    `The API shows ${name} in the clear: it masks a setting whose name contains secret, password, pwd, ` +
    `key, token or connectionstring, or whose value carries a credential. Rename it (e.g. ${name}_SECRET) to keep it hidden.`
  );
}

/// The settings a binding's `connection` is looked up in, first to last, as the API resolves it
/// (docs/triggers.md: `AzureWebJobs<name>` before `<name>`, a value or a `<name>__…` group; an
/// absent connection means `Storage`, that is `AzureWebJobsStorage`).
export function connectionSettingNames(connection: string | undefined): string[] {
  const name = connection && connection.trim() !== "" ? connection.trim() : "Storage";
  return /^azurewebjobs/i.test(name) ? [name] : [`AzureWebJobs${name}`, name];
}

/// Whether any setting could satisfy the connection (a value of that name, or a `__` / `:`
/// group under it), ignoring case as the API does. A hint for the form before the function
/// exists; the app's diagnostics say for certain.
export function hasConnection(settingNames: readonly string[], connection: string | undefined): boolean {
  const wanted = connectionSettingNames(connection).map((n) => n.toLowerCase());
  return settingNames.some((setting) => {
    const s = setting.toLowerCase();
    return wanted.some((w) => s === w || s.startsWith(`${w}__`) || s.startsWith(`${w}:`));
  });
}

/// A setting a binding needs, and how the API finds it: `connection`, as
/// `connectionSettingNames` says, a value or an identity-based `__` group; `connectionString`,
/// the same names but only a value (an Event Hubs connection string: identity-based
/// connections are refused); `exact`, that name alone (RabbitMQ's `connectionStringSetting`, a
/// Kafka property's `%Setting%` reference), ignoring case.
export interface NeededSetting {
  name: string;
  lookup: "connection" | "connectionString" | "exact";
}

/// The `%Name%` references in a value, as the API resolves them (a lone `%` stays as written).
export function settingReferences(value: unknown): string[] {
  if (typeof value !== "string") return [];
  return [...value.matchAll(/%([^%]+)%/g)].map((m) => m[1]);
}

/// The settings a function's bindings need, each as the setting to offer when it is missing:
/// the binding's own `connection` (what a person wrote and will recognise), or the default
/// setting of its kind when it names none (`AzureWebJobsStorage` for Storage queues,
/// `AzureWebJobsServiceBus` for Service Bus, `AzureWebJobsEventHub` for Event Hubs); a RabbitMQ
/// binding's `connectionStringSetting`; the settings a Kafka binding's `brokerList`, `username`
/// and `password` reference. Each once, in binding order.
export function bindingSettings(bindings: readonly Record<string, unknown>[]): NeededSetting[] {
  const out: NeededSetting[] = [];
  const add = (name: string, lookup: NeededSetting["lookup"]) => {
    if (name !== "" && !out.some((n) => n.name.toLowerCase() === name.toLowerCase())) out.push({ name, lookup });
  };
  for (const b of bindings) {
    const given = typeof b.connection === "string" ? b.connection.trim() : "";
    const type = typeof b.type === "string" ? b.type.toLowerCase() : "";
    if (type === "queuetrigger" || type === "queue") add(given || "AzureWebJobsStorage", "connection");
    else if (type.startsWith("servicebus")) add(given || "AzureWebJobsServiceBus", "connection");
    else if (type.startsWith("eventhub")) add(given || "AzureWebJobsEventHub", "connectionString");
    else if (type.startsWith("rabbitmq")) add(typeof b.connectionStringSetting === "string" ? b.connectionStringSetting.trim() : "", "exact");
    else if (type.startsWith("kafka")) for (const key of ["brokerList", "username", "password"]) for (const r of settingReferences(b[key])) add(r, "exact");
    else add(given, "connection");
  }
  return out;
}

/// Whether the app's settings hold what the binding needs (see `NeededSetting`).
export function hasSetting(settingNames: readonly string[], needed: NeededSetting): boolean {
  if (needed.lookup === "connection") return hasConnection(settingNames, needed.name);
  const wanted = (needed.lookup === "exact" ? [needed.name] : connectionSettingNames(needed.name)).map((n) => n.toLowerCase());
  return settingNames.some((s) => wanted.includes(s.toLowerCase()));
}
