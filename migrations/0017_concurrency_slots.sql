-- Slots of a function's `maxConcurrency`, leased by the instances that run it (see the domain's
-- `concurrency` module). An instance starts a handler call only while it holds a free slot under
-- an unexpired lease; it renews its row every few seconds in one short transaction, serialised
-- per function by an advisory lock, which keeps the sum of `slots` within the cap. A holder whose
-- lease has expired keeps its slots until `calls_end_by` (the lease's end plus the longest call
-- it could have started before), then the row is removed: a worker that died costs the fleet
-- part of its cap for that long, and never lets it run above the cap.

create table concurrency_slots (
    tenant_id      text not null,
    app_name       text not null,
    function_name  text not null,
    worker         text not null,
    instance       integer not null,
    -- One run of the instance's listener: a restart drains the old run while the new one
    -- starts, and each holds its own slots.
    generation     uuid not null,
    slots          integer not null check (slots >= 0),
    lease_until    timestamptz not null,
    calls_end_by   timestamptz not null check (calls_end_by >= lease_until),
    primary key (tenant_id, app_name, function_name, worker, instance, generation),
    foreign key (tenant_id, app_name, function_name)
        references functions (tenant_id, app_name, name) on delete cascade
);

alter table concurrency_slots enable row level security;
alter table concurrency_slots force row level security;
create policy tenant_isolation on concurrency_slots
    using (tenant_id = shoal_current_tenant()) with check (tenant_id = shoal_current_tenant());

do $$
begin
    if exists (select from pg_roles where rolname = 'shoal_app') then
        grant select, insert, update, delete on concurrency_slots to shoal_app;
    end if;
end
$$;
