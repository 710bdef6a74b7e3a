-- Queue messages a function's circuit breaker gave back to their queue without invoking them,
-- and how many times. Azure Storage counts every receive in a message's dequeue count and
-- offers no way to take one back, so the worker subtracts these holds: a pause costs a
-- message no attempt and never poisons it, and the message keeps its id (the handler's
-- `webhook-id`) instead of being re-enqueued as a fresh copy near its last attempt. Rows are
-- written only while a breaker is open; each lasts as long as its message can.

create table held_queue_messages (
    tenant_id      text not null,
    app_name       text not null,
    function_name  text not null,
    message_id     text not null,
    holds          integer not null check (holds > 0),
    -- The message's own expiry (Azure's expiration time): past it the row means nothing.
    expires_at     timestamptz not null,
    primary key (tenant_id, app_name, function_name, message_id),
    foreign key (tenant_id, app_name, function_name)
        references functions (tenant_id, app_name, name) on delete cascade
);
create index held_queue_messages_expiry on held_queue_messages (tenant_id, expires_at);

alter table held_queue_messages enable row level security;
alter table held_queue_messages force row level security;
create policy tenant_isolation on held_queue_messages
    using (tenant_id = shoal_current_tenant()) with check (tenant_id = shoal_current_tenant());

do $$
begin
    if exists (select from pg_roles where rolname = 'shoal_app') then
        grant select, insert, update, delete on held_queue_messages to shoal_app;
    end if;
end
$$;
