-- What the scheduler saw of each app, sampled every few seconds and kept for an hour: the sum of
-- its trigger functions' metrics (queue length, active messages), its desired instances and the
-- instances placed. The dashboard's scale chart plots them beside the decisions, which are
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
