-- Queue trigger delivery: each app's secret for signing deliveries to its handler, and the
-- worker registry with the heartbeats workers write.

-- The Standard Webhooks signing secret (key bytes, sealed like app settings with the row's
-- identity as associated data). Created on first use, so apps that existed before have one too.
alter table apps add column webhook_secret bytea;

-- Workers register and heartbeat here (platform scope: a worker serves every tenant). The
-- listener statistics are a JSON array written whole on each heartbeat; they are shown as is by
-- `GET /v1/workers`, never queried into.
create table workers (
    name          text primary key,
    state         text not null check (state in ('running', 'draining', 'stopped')),
    version       text not null,
    started_at    timestamptz not null,
    heartbeat_at  timestamptz not null,
    listeners     jsonb not null default '[]'
);

do $$
begin
    if exists (select from pg_roles where rolname = 'shoal_app') then
        grant select, insert, update, delete on workers to shoal_app;
    end if;
end
$$;
