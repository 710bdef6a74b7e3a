"""Seeds a fresh Shoal through its API so that schemathesis' path parameters name real
resources, then writes the schemathesis.toml that points every operation at them.

Usage: seed.py BASE_URL TOKEN CONFIG_OUT

Every resource is written with PUT, so seeding again (before the second run) restores what the
first run deleted. Deletes are pointed at scratch resources of their own, so the seeded ones
survive for every other operation; the signing-key rotation keeps a grace period so the run's
own token keeps verifying.
"""

import json
import sys
import urllib.error
import urllib.request

TENANT, APP, FUNCTION = "contoso", "orders", "Process"
IDENTITY, SERVICE_PRINCIPAL, USER, ROLE = "orders-id", "deployer", "alice", "OrderReader"
ASSIGNMENT = "0b7c1d2e-3f40-4a5b-8c6d-7e8f9a0b1c2d"
SCRATCH = {
    "tenant": "scratch",
    "app": "scratch",
    "function": "Scratch",
    "identity": "scratch-id",
    "servicePrincipal": "scratch-sp",
    "user": "scratch-user",
    "role": "ScratchRole",
    "assignment": "5c4d3e2f-1a0b-4c9d-8e7f-6a5b4c3d2e1f",
}
# `shoal dev`'s demo app: an httpTrigger function with a handler that answers.
WEBHOOK = ("demo", "hello", "welcome")
# And its queue function on `shoal dev`'s Azurite: a trigger queue and poison queue the API can
# reach.
QUEUE_FUNCTION = ("demo", "hello", "greet")
# Users are registered only with an issuer Shoal trusts: fuzz.sh starts `shoal dev` trusting this.
ISSUER = "https://login.example.com/contoso/v2.0"


class Api:
    def __init__(self, base, token):
        self.base, self.token = base, token

    def call(self, method, path, body=None, ok=(200, 201, 202, 204)):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data=data, method=method)
        request.add_header("Authorization", f"Bearer {self.token}")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                status, text = response.status, response.read().decode()
        except urllib.error.HTTPError as error:
            status, text = error.code, error.read().decode()
        if status not in ok:
            sys.exit(f"seed: {method} {path} answered {status}: {text}")
        return json.loads(text) if text else None


def seed(api):
    t = f"/v1/tenants/{TENANT}"
    scratch_t = f"/v1/tenants/{SCRATCH['tenant']}"
    limits = {"maxApps": 1000, "maxInstances": 1000}
    api.call("PUT", t, {"displayName": "Contoso", "limits": limits})
    api.call("PUT", scratch_t, {"displayName": "Scratch"})
    app = {"handler": {"url": "http://127.0.0.1:9/api"}, "appSettings": {"FEATURE": "on"}}
    for name in (APP, SCRATCH["app"]):
        api.call("PUT", f"{t}/apps/{name}", app)
    function = {"bindings": [
        {"type": "queueTrigger", "direction": "in", "name": "msg", "queueName": "orders"}
    ]}
    for name in (FUNCTION, SCRATCH["function"]):
        api.call("PUT", f"{t}/apps/{APP}/functions/{name}", function)
    principals = []
    for name in (IDENTITY, SCRATCH["identity"]):
        principals.append(api.call("PUT", f"{t}/identities/{name}")["principalId"])
    for name in (SERVICE_PRINCIPAL, SCRATCH["servicePrincipal"]):
        principals.append(api.call("PUT", f"{t}/servicePrincipals/{name}")["principalId"])
    for name in (USER, SCRATCH["user"]):
        user = {"issuer": ISSUER, "subject": f"{name}-subject"}
        principals.append(api.call("PUT", f"{t}/users/{name}", user)["principalId"])
    role = {
        "description": "Reads orders",
        "permissions": {"actions": ["Shoal/apps/read", "Shoal/apps/functions/read"]},
        "assignableScopes": [t.removeprefix("/v1")],
    }
    for name in (ROLE, SCRATCH["role"]):
        api.call("PUT", f"{t}/roleDefinitions/{name}", role)
    for id, principal in ((ASSIGNMENT, principals[4]), (SCRATCH["assignment"], principals[5])):
        assignment = {"principalId": principal, "roleDefinitionId": ROLE,
                      "scope": f"/tenants/{TENANT}/apps/{APP}"}
        api.call("PUT", f"{t}/roleAssignments/{id}", assignment)
    tenant, app_name, function_name = WEBHOOK
    accepted = api.call("POST", f"/webhooks/{tenant}/{app_name}/{function_name}?mode=async",
                        {"hello": "world"})
    return principals, accepted["id"]


def toml_value(value):
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f'"{k}" = {toml_value(v)}' for k, v in value.items()) + " }"
    return json.dumps(value)


def operation(ids, parameters, **extra):
    """One [[operations]] table: the operations `ids` with these fixed parameters."""
    lines = ["[[operations]]", f"include-operation-id = {toml_value(ids)}"]
    lines += [f"{k} = {toml_value(v)}" for k, v in extra.items()]
    lines.append(f"parameters = {toml_value(parameters)}")
    return "\n".join(lines) + "\n"


def config(principals, invocation):
    scopes = [f"/tenants/{TENANT}", f"/tenants/{TENANT}/apps/{APP}",
              f"/tenants/{TENANT}/apps/{APP}/functions/{FUNCTION}"]
    actions = ["Shoal/apps/read", "Shoal/apps/*", "*/read", "Shoal/apps/functions/read"]
    roles = ["Reader", "Contributor", "Owner", "Function Invoker", ROLE]
    data_actions = ["Shoal/apps/functions/invoke/action", "Shoal/apps/functions/*"]
    hook_tenant, hook_app, hook_function = WEBHOOK
    out = [
        "# Written by deploy/local/fuzz/seed.py for one run; not committed.",
        # Values from the seeded data for the body fields that must name something real;
        # generated values still appear (probability below 1) for the negative paths.
        "[dictionaries]",
        f"principals = {{ values = {toml_value(principals)} }}",
        f"scopes = {{ values = {toml_value(scopes)} }}",
        f"actions = {{ values = {toml_value(actions)} }}",
        f"roles = {{ values = {toml_value(roles)} }}",
        f"role_names = {{ values = {toml_value([ROLE])} }}",
        f"descriptions = {{ values = {toml_value(['Reads orders', ''])} }}",
        f"data_actions = {{ values = {toml_value(data_actions)} }}",
        "",
        "[parameters]",
        f'"path.tenant" = "{TENANT}"',
        f'"path.app" = "{APP}"',
        f'"path.function" = "{FUNCTION}"',
        '"body.principalId" = { dictionary = "principals", probability = 0.9 }',
        '"body.scope" = { dictionary = "scopes", probability = 0.9 }',
        '"body.roleDefinitionId" = { dictionary = "roles", probability = 0.9 }',
        '"body.name" = { dictionary = "role_names", probability = 0.9 }',
        '"body.description" = { dictionary = "descriptions", probability = 0.9 }',
        '"body.assignableScopes[*]" = { dictionary = "scopes", probability = 0.9 }',
        '"body.permissions.actions[*]" = { dictionary = "actions", probability = 0.9 }',
        '"body.permissions.notActions[*]" = { dictionary = "actions", probability = 0.9 }',
        '"body.permissions.dataActions[*]" = { dictionary = "data_actions", probability = 0.9 }',
        '"body.permissions.notDataActions[*]" = { dictionary = "data_actions", probability = 0.9 }',
        "",
    ]
    ops = [
        # The signing key rotates with a grace period: the run's token keeps verifying.
        operation(["rotate_signing_key"], {"query.graceSeconds": 3600}),
        operation(["get_identity", "put_identity"], {"path.name": IDENTITY}),
        operation(["get_service_principal", "put_service_principal", "new_secret"],
                  {"path.name": SERVICE_PRINCIPAL}),
        operation(["get_user", "put_user"], {"path.name": USER}),
        operation(["get_role_definition", "put_role_definition"], {"path.role": ROLE}),
        # Assignments cannot change (409), so PUT creates new ones under generated ids.
        operation(["get_role_assignment"], {"path.id": ASSIGNMENT}),
        operation(["list_role_assignments"], {"query.principalId": principals[4]}),
        # Deletes remove scratch resources, so the seeded ones stay for everything else.
        operation(["delete_tenant"], {"path.tenant": SCRATCH["tenant"]}),
        operation(["delete_app"], {"path.app": SCRATCH["app"]}),
        operation(["delete_function"], {"path.function": SCRATCH["function"]}),
        operation(["delete_identity"], {"path.name": SCRATCH["identity"]}),
        operation(["delete_service_principal"], {"path.name": SCRATCH["servicePrincipal"]}),
        operation(["delete_user"], {"path.name": SCRATCH["user"]}),
        operation(["delete_role_definition"], {"path.role": SCRATCH["role"]}),
        operation(["delete_role_assignment"], {"path.id": SCRATCH["assignment"]}),
        # Poison and test messages on a queue that exists (send does not create it).
        operation(["get_poison", "replay_poison", "send_message"],
                  {"path.tenant": QUEUE_FUNCTION[0], "path.app": QUEUE_FUNCTION[1],
                   "path.function": QUEUE_FUNCTION[2]}),
        operation(["invoke", "invocation_status"],
                  {"path.tenant": hook_tenant, "path.app": hook_app,
                   "path.function": hook_function, "path.id": invocation}),
    ]
    return "\n".join(out) + "\n" + "\n".join(ops)


def main():
    base, token, out = sys.argv[1:4]
    principals, invocation = seed(Api(base, token))
    with open(out, "w") as f:
        f.write(config(principals, invocation))


if __name__ == "__main__":
    main()
