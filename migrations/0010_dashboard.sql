-- What the dashboard shows beyond the configuration.
--
-- What the scheduler saw of each app, sampled every few seconds and kept for an hour: the sum
-- of its trigger functions' metrics (queue length, active messages), its desired instances and
-- the instances placed. The dashboard's scale chart plots them beside the decisions, which are
-- recorded only when the desired count changes.
create table scale_samples (
    tenant_id   text not null,
    app_name    text not null,
    at          timestamptz not null default now(),
    -- Null when no function's metric could be read this time.
    metric      bigint,
    desired     integer not null,
    placed      integer not null,
    primary key (tenant_id, app_name, at),
    foreign key (tenant_id, app_name) references apps (tenant_id, name) on delete cascade
);
-- Pruning by age scans this.
create index scale_samples_at on scale_samples (at);

do $$
begin
    if exists (select from pg_roles where rolname = 'shoal_app') then
        grant select, insert, update, delete on scale_samples to shoal_app;
    end if;
end
$$;

-- Invocation telemetry, written by workers in batches: per function and minute, each worker's
-- invocations, final and retried failures alike counted per attempt, and a histogram of their
-- durations (bucket bounds in shoal_domain::invocation_stats), kept for a day; and the latest
-- failed attempts with their error and the handler's `Logs`, kept per function up to a bound.
-- One row per worker, so workers never contend: readers add the rows up.
create table invocation_minutes (
    tenant_id      text not null,
    app_name       text not null,
    function_name  text not null,
    minute         timestamptz not null,
    worker         text not null,
    invocations    bigint not null,
    failures       bigint not null,
    duration_buckets bigint[] not null,
    primary key (tenant_id, app_name, function_name, minute, worker),
    foreign key (tenant_id, app_name) references apps (tenant_id, name) on delete cascade
);
create index invocation_minutes_minute on invocation_minutes (minute);

create table invocation_failures (
    id             bigserial primary key,
    tenant_id      text not null,
    app_name       text not null,
    function_name  text not null,
    at             timestamptz not null,
    invocation_id  uuid not null,
    worker         text not null,
    duration_ms    bigint not null,
    error          text not null,
    logs           jsonb not null,
    foreign key (tenant_id, app_name) references apps (tenant_id, name) on delete cascade
);
create index invocation_failures_function
    on invocation_failures (tenant_id, app_name, function_name, id desc);

do $$
begin
    if exists (select from pg_roles where rolname = 'shoal_app') then
        grant select, insert, update, delete on invocation_minutes, invocation_failures to shoal_app;
        grant usage, select on sequence invocation_failures_id_seq to shoal_app;
    end if;
end
$$;
