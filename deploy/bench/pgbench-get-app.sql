-- The SQL Shoal's store executes for `GET /v1/tenants/{tenant}/apps/{app}`: one statement,
-- apps::read (services/store/src/apps.rs) calling shoal_read_app
-- (migrations/0002_single_statement_app_read.sql), which sets the tenant for its own implicit
-- transaction. Keep it in step with those files: shoal-bench reports Shoal's throughput as a
-- ratio against this script's.
--
-- Variables (pgbench -D): tenant, apps (how many apps `app-1` … `app-N` exist). The store's
-- connections act as the role shoal_app when they log in as a superuser; so does pgbench with
-- PGOPTIONS='-c role=shoal_app'. By hand:
--   PGOPTIONS='-c role=shoal_app' pgbench -n -c 64 -j 2 -T 10 -M prepared \
--     -D tenant=bench -D apps=1000 -f deploy/bench/pgbench-get-app.sql "$DATABASE_URL"
\set n random(1, :apps)
select * from shoal_read_app(:tenant, 'app-' || :n::text);
