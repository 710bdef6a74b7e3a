-- Where each timer-triggered function's schedule stands (Azure's ScheduleStatus: Last, Next,
-- LastUpdated), shared by every worker that hosts the function. An occurrence is fired by the
-- worker whose compare-and-set moves the status on from it, and only by a worker that holds a
-- claim on one of the app's instances under a lease the database counts live: one invocation
-- per occurrence across the fleet, and none from a worker that was paused or cut off while
-- another took over.

create table timer_schedules (
    tenant_id        text not null,
    app_name         text not null,
    function_name    text not null,
    -- The latest invocation (Azure's ScheduleStatus.Last); null before the first.
    last_occurrence  timestamptz,
    -- The next occurrence due (ScheduleStatus.Next).
    next_occurrence  timestamptz not null,
    -- When `next_occurrence` was last counted (ScheduleStatus.LastUpdated).
    last_updated     timestamptz not null,
    primary key (tenant_id, app_name, function_name),
    foreign key (tenant_id, app_name, function_name)
        references functions (tenant_id, app_name, name) on delete cascade
);

alter table timer_schedules enable row level security;
alter table timer_schedules force row level security;
create policy tenant_isolation on timer_schedules
    using (tenant_id = shoal_current_tenant()) with check (tenant_id = shoal_current_tenant());

do $$
begin
    if exists (select from pg_roles where rolname = 'shoal_app') then
        grant select, insert, update, delete on timer_schedules to shoal_app;
    end if;
end
$$;
