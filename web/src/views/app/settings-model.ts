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

/// The connections a function's bindings name, each as the setting to offer when it is missing:
/// the binding's own `connection` (what a person wrote and will recognise), or the default
/// setting of its kind when it names none (`AzureWebJobsStorage` for Storage queues,
/// `AzureWebJobsServiceBus` for Service Bus). Each once, in binding order.
export function bindingConnections(bindings: readonly Record<string, unknown>[]): string[] {
  const out: string[] = [];
  for (const b of bindings) {
    const given = typeof b.connection === "string" ? b.connection.trim() : "";
    const type = typeof b.type === "string" ? b.type.toLowerCase() : "";
    let name = given;
    if (name === "" && (type === "queuetrigger" || type === "queue")) name = "AzureWebJobsStorage";
    if (name === "" && type.startsWith("servicebus")) name = "AzureWebJobsServiceBus";
    if (name !== "" && !out.some((n) => n.toLowerCase() === name.toLowerCase())) out.push(name);
  }
  return out;
}
