-- The SQL Shoal's store executes for `GET /v1/tenants/{tenant}/apps/{app}`, one transaction per
-- request: begin_tenant (services/store/src/tenant.rs), then apps::get
-- (services/store/src/apps.rs). Keep it in step with those files: shoal-bench reports Shoal's
-- throughput as a ratio against this script's.
--
-- Variables (pgbench -D): tenant, apps (how many apps `app-1` … `app-N` exist). The store's
-- connections act as the role shoal_app when they log in as a superuser; so does pgbench with
-- PGOPTIONS='-c role=shoal_app'. By hand:
--   PGOPTIONS='-c role=shoal_app' pgbench -n -c 64 -j 2 -T 10 -M prepared \
--     -D tenant=bench -D apps=1000 -f deploy/bench/pgbench-get-app.sql "$DATABASE_URL"
\set n random(1, :apps)
begin;
select set_config('shoal.tenant_id', :tenant, true);
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
commit;
