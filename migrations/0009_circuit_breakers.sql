-- Circuit breakers: one per function, shared by every worker (the reliable-event-processing
-- reference document's "state shared across all instances"). Workers add their final failures
-- to per-second buckets in batches and open the breaker in the same transaction when the
-- window holds more than the threshold; every transition is kept in a bounded history and
-- announced on `shoal_breakers` (payload `tenant/app/function`) so every listener of the
-- function pauses or resumes within a second.

create table function_breakers (
    tenant_id      text not null,
    app_name       text not null,
    function_name  text not null,
    state          text not null default 'closed'
                      check (state in ('closed', 'open', 'halfOpen')),
    -- The last transition's cause (see the domain's BreakerCause).
    cause          text,
    changed_at     timestamptz not null default now(),
    -- Failures are counted from here on: a close starts a fresh window, so the failures that
    -- opened the breaker do not open it again at once.
    counting_since timestamptz not null default now(),
    -- While half-open: the worker holding the probe, and until when its claim holds (a worker
    -- that died lets another take the probe over).
    probe_by       text,
    probe_until    timestamptz,
    -- The failures that opened it: [{at, reason}], newest first, bounded by the writer.
    failures       jsonb not null default '[]',
    primary key (tenant_id, app_name, function_name),
    foreign key (tenant_id, app_name, function_name)
        references functions (tenant_id, app_name, name) on delete cascade
);

create table function_breaker_failures (
    tenant_id      text not null,
    app_name       text not null,
    function_name  text not null,
    second         timestamptz not null,
    failures       integer not null check (failures > 0),
    primary key (tenant_id, app_name, function_name, second),
    foreign key (tenant_id, app_name, function_name)
        references functions (tenant_id, app_name, name) on delete cascade
);

create table function_breaker_transitions (
    id             bigserial primary key,
    tenant_id      text not null,
    app_name       text not null,
    function_name  text not null,
    at             timestamptz not null default now(),
    from_state     text not null,
    to_state       text not null,
    cause          text not null,
    -- The principal who paused or resumed, or the worker that counted, probed or half-opened.
    actor          text not null,
    failures       jsonb not null default '[]',
    foreign key (tenant_id, app_name, function_name)
        references functions (tenant_id, app_name, name) on delete cascade
);
create index function_breaker_transitions_by_function
    on function_breaker_transitions (tenant_id, app_name, function_name, id desc);

alter table function_breakers enable row level security;
alter table function_breakers force row level security;
create policy tenant_isolation on function_breakers
    using (tenant_id = shoal_current_tenant()) with check (tenant_id = shoal_current_tenant());
alter table function_breaker_failures enable row level security;
alter table function_breaker_failures force row level security;
create policy tenant_isolation on function_breaker_failures
    using (tenant_id = shoal_current_tenant()) with check (tenant_id = shoal_current_tenant());
alter table function_breaker_transitions enable row level security;
alter table function_breaker_transitions force row level security;
create policy tenant_isolation on function_breaker_transitions
    using (tenant_id = shoal_current_tenant()) with check (tenant_id = shoal_current_tenant());

create or replace function shoal_notify_breaker() returns trigger language plpgsql as $$
begin
    if tg_op = 'INSERT' or new.state is distinct from old.state then
        perform pg_notify('shoal_breakers',
            new.tenant_id || '/' || new.app_name || '/' || new.function_name);
    end if;
    return null;
end
$$;
create trigger function_breakers_notify after insert or update on function_breakers
    for each row execute function shoal_notify_breaker();

do $$
begin
    if exists (select from pg_roles where rolname = 'shoal_app') then
        grant select, insert, update, delete on function_breakers, function_breaker_failures,
            function_breaker_transitions to shoal_app;
        grant usage, select on sequence function_breaker_transitions_id_seq to shoal_app;
        grant execute on function shoal_notify_breaker() to shoal_app;
    end if;
end
$$;
