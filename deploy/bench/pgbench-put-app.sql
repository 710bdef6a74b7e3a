-- The SQL Shoal's store executes for `PUT /v1/tenants/{tenant}/apps/{app}` replacing an existing
-- app, one transaction per request: begin_tenant (services/store/src/tenant.rs), apps::put with
-- replace_settings and the read-back apps::get (services/store/src/apps.rs), and the audit entry
-- (services/store/src/audit.rs, written by services/api/src/routes/apps.rs). Keep it in step
-- with those files: shoal-bench reports Shoal's throughput as a ratio against this script's.
--
-- Variables (pgbench -D), bound as parameters as the store binds them: tenant, apps (how many
-- apps `app-1` … `app-N` exist), spec (the stored JSON), names, vals, secrets (the settings as
-- Postgres array literals; vals are sealed values of the size AES-256-GCM produces), principal.
-- shoal-bench passes them all; see services/bench/src/main.rs. Connections act as shoal_app as
-- the store's do (PGOPTIONS='-c role=shoal_app').
\set n random(1, :apps)
begin;
select set_config('shoal.tenant_id', :tenant, true);
select etag as previous from apps where tenant_id = :tenant and name = 'app-' || :n::text for update \gset
insert into apps (tenant_id, name, spec, etag) values (:tenant, 'app-' || :n::text, :spec, gen_random_uuid())
    on conflict (tenant_id, name) do update set spec = excluded.spec, etag = excluded.etag
        where apps.etag is not distinct from :previous::uuid
    returning 1;
delete from app_settings where tenant_id = :tenant and app_name = 'app-' || :n::text;
insert into app_settings (tenant_id, app_name, name, value, secret)
    select :tenant, 'app-' || :n::text, n, v, s
    from unnest(:names::text[], :vals::bytea[], :secrets::bool[]) as t(n, v, s);
select a.name, a.spec, a.etag, a.created_at, a.updated_at, s.names, s.vals, s.secrets
    from apps a
    cross join lateral (
        select coalesce(array_agg(name order by name), '{}') as names,
               coalesce(array_agg(value order by name), '{}') as vals,
               coalesce(array_agg(secret order by name), '{}') as secrets
        from app_settings
        where tenant_id = a.tenant_id and app_name = a.name
    ) s
    where a.tenant_id = :tenant and a.name = 'app-' || :n::text;
insert into audit_log (tenant_id, principal, action, resource, outcome, request_id)
    values (shoal_current_tenant(), :principal, 'apps/write',
            '/v1/tenants/' || :tenant || '/apps/app-' || :n::text, 'succeeded', null);
commit;
