-- The scheduler: its leader lease, the app instances it places on workers, the claims workers
-- hold while they act on an instance, and every scale decision with its inputs.
--
-- These tables are platform scope like `workers` (the scheduler and workers serve every
-- tenant), so they carry no row-level security; the tenant-facing reads in the store
-- (`scale::status`) take a TenantId and filter on it.

-- One row: who leads and until when. `epoch` rises by one on every change of leader and is the
-- fencing token: a write by a deposed leader checks it under the row lock and fails.
create table scheduler_lease (
    singleton    boolean primary key default true check (singleton),
    holder       text,
    epoch        bigint not null default 0,
    acquired_at  timestamptz,
    expires_at   timestamptz not null default '-infinity'
);
insert into scheduler_lease default values;

-- A worker's lease: it is alive while `heartbeat_at + lease_ttl_ms` is in the future (the
-- database's clock on both sides). `capacity` caps the app instances placed on it.
alter table workers add column capacity integer not null default 100 check (capacity >= 0);
alter table workers add column lease_ttl_ms integer not null default 15000 check (lease_ttl_ms > 0);

-- The scheduler's intent: app instance -> worker, stamped with the epoch of the leader that
-- wrote it. Workers act only on rows of the current epoch.
create table assignments (
    tenant_id    text not null,
    app_name     text not null,
    instance     integer not null check (instance >= 0),
    worker       text not null,
    epoch        bigint not null,
    assigned_at  timestamptz not null default now(),
    primary key (tenant_id, app_name, instance),
    foreign key (tenant_id, app_name) references apps (tenant_id, name) on delete cascade
);
create index assignments_worker on assignments (worker);

-- Who is acting on an instance now: taken by a worker before its listeners start, given back
-- after they have drained. A worker takes over a claim only from itself or from a worker whose
-- lease has lapsed, so an instance is never acted on by two workers at once. Not tied to
-- `assignments`: a claim outlives its assignment until the old worker has drained.
create table instance_claims (
    tenant_id    text not null,
    app_name     text not null,
    instance     integer not null,
    worker       text not null,
    claimed_at   timestamptz not null default now(),
    primary key (tenant_id, app_name, instance)
);
create index instance_claims_worker on instance_claims (worker);

-- The latest decision per app (what `GET …/scale` shows as desired).
create table app_scale (
    tenant_id    text not null,
    app_name     text not null,
    desired      integer not null check (desired >= 0),
    mode         text not null check (mode in ('target', 'incremental')),
    decided_at   timestamptz not null default now(),
    primary key (tenant_id, app_name),
    foreign key (tenant_id, app_name) references apps (tenant_id, name) on delete cascade
);

-- Decisions that changed an app's desired instances, with their inputs and reason. The
-- scheduler keeps the most recent ones per app.
create table scale_decisions (
    id            bigserial primary key,
    tenant_id     text not null,
    app_name      text not null,
    at            timestamptz not null default now(),
    from_count    integer not null,
    to_count      integer not null,
    mode          text not null,
    reason        text not null,
    metrics       jsonb not null,
    epoch         bigint not null,
    foreign key (tenant_id, app_name) references apps (tenant_id, name) on delete cascade
);
create index scale_decisions_app on scale_decisions (tenant_id, app_name, id desc);

-- Workers LISTEN on `shoal_assignments`: the payload names the worker whose assignments or
-- claims changed (Postgres folds identical payloads of one transaction into one notification).
-- A deleted app's assignments cascade away, and this tells their workers at once.
-- Statement-level, so a tick that moves thousands of instances notifies each worker once
-- without a trigger call per row (Postgres allows transition tables on single-event triggers
-- only, hence three triggers; plpgsql plans each branch only when it runs).
create function shoal_notify_assignment() returns trigger language plpgsql as $$
begin
    if tg_op = 'INSERT' then
        perform pg_notify('shoal_assignments', w) from (select distinct worker as w from new_rows) n;
    elsif tg_op = 'UPDATE' then
        perform pg_notify('shoal_assignments', w)
        from (select worker as w from old_rows union select worker from new_rows) n;
    else
        perform pg_notify('shoal_assignments', w) from (select distinct worker as w from old_rows) n;
    end if;
    return null;
end
$$;
create trigger assignments_notify_insert after insert on assignments
    referencing new table as new_rows
    for each statement execute function shoal_notify_assignment();
create trigger assignments_notify_update after update on assignments
    referencing old table as old_rows new table as new_rows
    for each statement execute function shoal_notify_assignment();
create trigger assignments_notify_delete after delete on assignments
    referencing old table as old_rows
    for each statement execute function shoal_notify_assignment();
-- A released claim lets the instance's next worker start: tell everyone (the payload is empty).
create function shoal_notify_claim_released() returns trigger language plpgsql as $$
begin
    perform pg_notify('shoal_assignments', '');
    return null;
end
$$;
create trigger instance_claims_notify after delete on instance_claims
    for each row execute function shoal_notify_claim_released();

-- A changed app or function restarts its instances' listeners: tell the workers on
-- `shoal_config` (payload `tenant/app`) instead of waiting for their periodic refresh.
create function shoal_notify_config() returns trigger language plpgsql as $$
begin
    if tg_op = 'DELETE' then
        perform pg_notify('shoal_config', old.tenant_id || '/' || old.name);
    else
        perform pg_notify('shoal_config', new.tenant_id || '/' || new.name);
    end if;
    return null;
end
$$;
create trigger apps_notify after insert or update or delete on apps
    for each row execute function shoal_notify_config();
create function shoal_notify_function_config() returns trigger language plpgsql as $$
begin
    if tg_op = 'DELETE' then
        perform pg_notify('shoal_config', old.tenant_id || '/' || old.app_name);
    else
        perform pg_notify('shoal_config', new.tenant_id || '/' || new.app_name);
    end if;
    return null;
end
$$;
create trigger functions_notify after insert or update or delete on functions
    for each row execute function shoal_notify_function_config();
create trigger app_settings_notify after insert or update or delete on app_settings
    for each row execute function shoal_notify_function_config();

do $$
begin
    if exists (select from pg_roles where rolname = 'shoal_app') then
        grant select, insert, update, delete
            on scheduler_lease, assignments, instance_claims, app_scale, scale_decisions
            to shoal_app;
        grant usage, select on sequence scale_decisions_id_seq to shoal_app;
        grant execute on function shoal_notify_assignment(), shoal_notify_claim_released(),
            shoal_notify_config(), shoal_notify_function_config() to shoal_app;
    end if;
end
$$;
