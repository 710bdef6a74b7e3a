-- Queue messages parked for a retry that is far off (`shoal_domain::durable_retry`): the
-- worker set the message's visibility timeout to the wait and kept here where its retries
-- stand, so that whichever worker receives it when it is due resumes the function's retry
-- policy there (the same RetryCount and back-off) instead of starting it again. The receive
-- that parked it is also recorded as a hold (held_queue_messages), so the hop raises no
-- dequeue count. A row lasts until the message is settled after its retry, or expires with it.

create table parked_retries (
    tenant_id         text not null,
    app_name          text not null,
    function_name     text not null,
    message_id        text not null,
    -- Retries made so far: the next attempt's RetryCount.
    retries           integer not null check (retries > 0),
    -- Why the attempt before the park failed (its RetryContext's Exception.Message), cut short.
    previous_failure  text,
    -- The retry policy's back-off so far (an exponential back-off never shrinks once grown).
    backoff_ms        bigint not null check (backoff_ms >= 0),
    due_at            timestamptz not null,
    -- The message's own expiry (Azure's expiration time): past it the row means nothing.
    expires_at        timestamptz not null,
    primary key (tenant_id, app_name, function_name, message_id),
    foreign key (tenant_id, app_name, function_name)
        references functions (tenant_id, app_name, name) on delete cascade
);
create index parked_retries_expiry on parked_retries (tenant_id, expires_at);

alter table parked_retries enable row level security;
alter table parked_retries force row level security;
create policy tenant_isolation on parked_retries
    using (tenant_id = shoal_current_tenant()) with check (tenant_id = shoal_current_tenant());

do $$
begin
    if exists (select from pg_roles where rolname = 'shoal_app') then
        grant select, insert, update, delete on parked_retries to shoal_app;
    end if;
end
$$;
