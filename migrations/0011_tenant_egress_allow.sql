-- The egress policy's per-tenant allowances: destinations beyond public addresses that this
-- tenant's handlers and connections may reach (entries as `--egress-allow` takes them, checked
-- by the API; docs/operating/egress.md). Tenants are written at platform scope only, so only
-- a platform administrator sets them; no tenant can widen its own.
alter table tenants add column egress_allow text[] not null default '{}';

-- What a tenant row decides for its apps' connections (these allowances, the host identity)
-- reaches every process that caches it: `shoal_config` with payload `tenant/` stands for every
-- app of the tenant.
create function shoal_notify_tenant_config() returns trigger language plpgsql as $$
begin
    if old.egress_allow is distinct from new.egress_allow
        or old.allow_host_identity is distinct from new.allow_host_identity then
        perform pg_notify('shoal_config', new.name || '/');
    end if;
    return null;
end
$$;
create trigger tenants_notify_config after update on tenants
    for each row execute function shoal_notify_tenant_config();

do $$
begin
    if exists (select from pg_roles where rolname = 'shoal_app') then
        grant execute on function shoal_notify_tenant_config() to shoal_app;
    end if;
end
$$;
