-- The invocation log the dashboard's explorer searches: every delivery a worker made of a
-- message (or event, or occurrence) to a function's handler, successes too, with its attempts.
--
-- An invocation here is one delivery key: the Standard Webhooks `webhook-id`, stable across
-- the retry policy's attempts and the source's redeliveries (dequeues), so a message failing
-- five times is one row with five attempts, not five anonymous rows. Each attempt carries its
-- own invocation id (`X-Shoal-Invocation-Id`, fresh per attempt as Azure's are), its
-- RetryCount, and the source's DequeueCount or DeliveryCount where the trigger has one.
--
-- Written by workers in batches, one transaction per flush (shoal_store::invocation_log).
-- Bounded: a function keeps its newest `KEPT_INVOCATIONS` invocations by start, an invocation
-- its newest `KEPT_ATTEMPTS` attempts; both pruned in the flush that adds to them. Log lines
-- and the payload preview are cut short by the worker before they get here.

create table invocations (
    id               bigserial primary key,
    tenant_id        text not null,
    app_name         text not null,
    function_name    text not null,
    delivery_key     text not null,
    -- The source's message id (queue `Id`, Service Bus `MessageId`…), when it has one.
    message_id       text,
    started_at       timestamptz not null,
    last_at          timestamptz not null,
    -- The latest attempt's: `succeeded` or `failed`.
    status           text not null check (status in ('succeeded', 'failed')),
    -- Every attempt made, also those pruned from invocation_attempts.
    attempts         integer not null check (attempts > 0),
    -- The trigger's data as the handler got it, as text (JSON or plain), cut short.
    payload_preview  text,
    payload_truncated boolean not null default false,
    unique (tenant_id, app_name, function_name, delivery_key),
    foreign key (tenant_id, app_name, function_name)
        references functions (tenant_id, app_name, name) on delete cascade
);
-- The explorer's pages: newest first, keyset on (started_at, id); the cap's edge too.
create index invocations_newest
    on invocations (tenant_id, app_name, function_name, started_at desc, id desc);
create index invocations_message
    on invocations (tenant_id, app_name, function_name, message_id) where message_id is not null;

create table invocation_attempts (
    id               bigserial primary key,
    invocation       bigint not null references invocations (id) on delete cascade,
    -- Repeated from the invocation so row-level security needs no join.
    tenant_id        text not null,
    invocation_id    uuid not null,
    at               timestamptz not null,
    retry_count      integer not null check (retry_count >= 0),
    -- DequeueCount (Storage Queue) or DeliveryCount (Service Bus); null for other triggers.
    delivery_count   bigint,
    worker           text not null,
    duration_ms      bigint not null,
    status           text not null check (status in ('succeeded', 'failed')),
    error            text,
    logs             jsonb not null
);
create index invocation_attempts_of on invocation_attempts (invocation, at desc, id desc);
create index invocation_attempts_invocation_id on invocation_attempts (tenant_id, invocation_id);

alter table invocations enable row level security;
alter table invocations force row level security;
create policy tenant_isolation on invocations
    using (tenant_id = shoal_current_tenant()) with check (tenant_id = shoal_current_tenant());

alter table invocation_attempts enable row level security;
alter table invocation_attempts force row level security;
create policy tenant_isolation on invocation_attempts
    using (tenant_id = shoal_current_tenant()) with check (tenant_id = shoal_current_tenant());

do $$
begin
    if exists (select from pg_roles where rolname = 'shoal_app') then
        grant select, insert, update, delete on invocations, invocation_attempts to shoal_app;
        grant usage, select on sequence invocations_id_seq, invocation_attempts_id_seq to shoal_app;
    end if;
end
$$;
