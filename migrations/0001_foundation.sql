-- Shoal's foundation schema.
--
-- Tenant isolation is enforced twice: every repository function takes a TenantId and filters
-- on it, and row-level security checks `tenant_id` against the per-transaction setting
-- `shoal.tenant_id` (set with `set_config(..., true)` at the start of each tenant-scoped
-- transaction). RLS is FORCEd so the table owner is subject to it too; a superuser connection
-- switches to the `shoal_app` role (see store::pool) because superusers bypass RLS entirely.

-- The role the application acts as. Creating it needs CREATEROLE; where the migrating user
-- lacks it (some managed Postgres offerings) the role must be created by an administrator.
do $$
begin
    if not exists (select from pg_roles where rolname = 'shoal_app') then
        create role shoal_app nologin;
    end if;
exception
    -- Several databases on one cluster (tests) may migrate at once; the role is cluster-wide.
    when duplicate_object or unique_violation then null;
end
$$;

-- `updated_at` maintained by the database so no code path can forget it.
create or replace function shoal_set_updated_at() returns trigger as $$
begin
    new.updated_at = now();
    return new;
end;
$$ language plpgsql;

-- The tenant the current transaction acts for, or null for platform-scoped work.
create or replace function shoal_current_tenant() returns text as $$
    select nullif(current_setting('shoal.tenant_id', true), '')
$$ language sql stable;

-- Platform scope: tenants themselves are not tenant-scoped.
create table tenants (
    name          text primary key,
    display_name  text not null,
    max_apps      integer,
    max_instances integer,
    etag          uuid not null,
    created_at    timestamptz not null default now(),
    updated_at    timestamptz not null default now()
);
create trigger tenants_updated_at before update on tenants
    for each row execute function shoal_set_updated_at();

-- An app's specification is stored as the tenant wrote it (`spec`), so a later merge patch
-- applies to what was written and defaults computed on read follow the current rules.
create table apps (
    tenant_id   text not null references tenants (name) on delete cascade,
    name        text not null,
    spec        jsonb not null,
    etag        uuid not null,
    created_at  timestamptz not null default now(),
    updated_at  timestamptz not null default now(),
    primary key (tenant_id, name)
);
create trigger apps_updated_at before update on apps
    for each row execute function shoal_set_updated_at();

-- Every value is encrypted (AES-256-GCM under SHOAL_SECRET_KEY: 12-byte nonce || ciphertext,
-- the row's identity as associated data); `secret` says whether reads mask it.
create table app_settings (
    tenant_id  text not null,
    app_name   text not null,
    name       text not null,
    value      bytea not null,
    secret     boolean not null,
    primary key (tenant_id, app_name, name),
    foreign key (tenant_id, app_name) references apps (tenant_id, name) on delete cascade
);

create table functions (
    tenant_id   text not null,
    app_name    text not null,
    name        text not null,
    spec        jsonb not null,
    etag        uuid not null,
    created_at  timestamptz not null default now(),
    updated_at  timestamptz not null default now(),
    primary key (tenant_id, app_name, name),
    foreign key (tenant_id, app_name) references apps (tenant_id, name) on delete cascade
);
create trigger functions_updated_at before update on functions
    for each row execute function shoal_set_updated_at();

-- Users, service principals and managed identities. Secrets are stored hashed.
create table principals (
    id           uuid primary key,
    tenant_id    text not null references tenants (name) on delete cascade,
    kind         text not null check (kind in
                    ('user', 'servicePrincipal', 'systemAssignedIdentity', 'userAssignedIdentity')),
    name         text not null,
    client_id    uuid not null unique,
    app_name     text,
    secret_hash  text,
    created_at   timestamptz not null default now(),
    updated_at   timestamptz not null default now(),
    unique (tenant_id, kind, name)
);
create trigger principals_updated_at before update on principals
    for each row execute function shoal_set_updated_at();

-- Built-in roles have no tenant; custom roles belong to one.
create table role_definitions (
    id                uuid primary key,
    tenant_id         text references tenants (name) on delete cascade,
    name              text not null,
    description       text not null default '',
    permissions       jsonb not null,
    assignable_scopes text[] not null,
    built_in          boolean not null default false,
    created_at        timestamptz not null default now(),
    updated_at        timestamptz not null default now()
);
create unique index role_definitions_name on role_definitions (coalesce(tenant_id, ''), name);
create trigger role_definitions_updated_at before update on role_definitions
    for each row execute function shoal_set_updated_at();

create table role_assignments (
    id                 uuid primary key,
    tenant_id          text not null references tenants (name) on delete cascade,
    principal_id       uuid not null references principals (id) on delete cascade,
    role_definition_id uuid not null references role_definitions (id) on delete cascade,
    scope              text not null,
    created_at         timestamptz not null default now(),
    unique (principal_id, role_definition_id, scope)
);

-- Token signing keys (platform scope). The private key is encrypted like app settings.
create table signing_keys (
    kid          text primary key,
    algorithm    text not null,
    private_key  bytea not null,
    public_jwk   jsonb not null,
    created_at   timestamptz not null default now(),
    retired_at   timestamptz
);

-- Who did what. Platform-scoped entries have no tenant.
create table audit_log (
    id          bigserial primary key,
    tenant_id   text,
    at          timestamptz not null default now(),
    principal   text not null,
    action      text not null,
    resource    text not null,
    outcome     text not null,
    request_id  text,
    details     jsonb not null default '{}'
);
create index audit_log_tenant_at on audit_log (tenant_id, at);

-- Row-level security on every tenant-scoped table.
alter table apps enable row level security;
alter table apps force row level security;
create policy tenant_isolation on apps
    using (tenant_id = shoal_current_tenant()) with check (tenant_id = shoal_current_tenant());

alter table app_settings enable row level security;
alter table app_settings force row level security;
create policy tenant_isolation on app_settings
    using (tenant_id = shoal_current_tenant()) with check (tenant_id = shoal_current_tenant());

alter table functions enable row level security;
alter table functions force row level security;
create policy tenant_isolation on functions
    using (tenant_id = shoal_current_tenant()) with check (tenant_id = shoal_current_tenant());

alter table principals enable row level security;
alter table principals force row level security;
create policy tenant_isolation on principals
    using (tenant_id = shoal_current_tenant()) with check (tenant_id = shoal_current_tenant());

alter table role_assignments enable row level security;
alter table role_assignments force row level security;
create policy tenant_isolation on role_assignments
    using (tenant_id = shoal_current_tenant()) with check (tenant_id = shoal_current_tenant());

-- Built-in definitions are visible to every tenant; custom ones only to their own.
alter table role_definitions enable row level security;
alter table role_definitions force row level security;
create policy tenant_isolation on role_definitions
    using (tenant_id is null or tenant_id = shoal_current_tenant())
    with check (tenant_id = shoal_current_tenant());

-- A tenant sees its own entries; platform-scoped work (no tenant set) sees only platform entries.
alter table audit_log enable row level security;
alter table audit_log force row level security;
create policy tenant_isolation on audit_log
    using (tenant_id is not distinct from shoal_current_tenant())
    with check (tenant_id is not distinct from shoal_current_tenant());

insert into role_definitions (id, tenant_id, name, description, permissions, assignable_scopes, built_in) values
    ('8e3af657-a8ff-443c-a75c-2fe8c4bcb635', null, 'Owner',
     'Full access, including role assignments.',
     '{"actions": ["*"], "notActions": [], "dataActions": ["*"], "notDataActions": []}', '{/}', true),
    ('b24988ac-6180-42a0-ab88-20f7382dd24c', null, 'Contributor',
     'Manage everything except role assignments.',
     '{"actions": ["*"], "notActions": ["Shoal/roleAssignments/write", "Shoal/roleAssignments/delete"], "dataActions": [], "notDataActions": []}', '{/}', true),
    ('acdd72a7-3385-48ef-bd42-f606fba81ae7', null, 'Reader',
     'Read everything except secrets.',
     '{"actions": ["*/read"], "notActions": [], "dataActions": [], "notDataActions": []}', '{/}', true),
    ('6d2a8f1c-2b0e-4f55-9f7e-3c1d6b1e9a01', null, 'Function Invoker',
     'Invoke functions through the webhook ingress.',
     '{"actions": [], "notActions": [], "dataActions": ["Shoal/apps/functions/invoke/action"], "notDataActions": []}', '{/}', true);

do $$
begin
    if exists (select from pg_roles where rolname = 'shoal_app') then
        grant usage on schema public to shoal_app;
        grant select, insert, update, delete on all tables in schema public to shoal_app;
        grant usage, select on all sequences in schema public to shoal_app;
        grant execute on all functions in schema public to shoal_app;
    end if;
end
$$;
