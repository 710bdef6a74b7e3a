-- Webhook invocations accepted with `?mode=async`: queued here before the caller gets its 202,
-- delivered by a dispatcher in every API process, kept 24 hours after completion so callers
-- can read the outcome.
--
-- A Postgres table rather than an Azure Storage queue: the invocation is durable the moment
-- the 202 is sent (the same database as the rest of Shoal, no extra service or connection
-- string per deployment), its status and stored response can be read by id at any time (a
-- storage queue can only be peeked at the front), and claims with FOR UPDATE SKIP LOCKED give
-- every API process a share of the work without a coordinator.

create table webhook_invocations (
    tenant_id        text not null,
    app_name         text not null,
    function_name    text not null,
    id               uuid not null,
    status           text not null default 'queued'
                        check (status in ('queued', 'running', 'succeeded', 'failed')),
    -- Attempts started; a claim increments it, and it fences a completion against a
    -- dispatcher whose claim lapsed and was taken over.
    attempts         integer not null default 0 check (attempts >= 0),
    -- The custom-handler request body (the caller's method, URL, headers and body), sealed
    -- like app settings with the row's identity as associated data.
    payload          bytea not null,
    request_id       text,
    next_attempt_at  timestamptz not null default now(),
    -- The dispatcher delivering it and until when its claim holds; a crashed API process's
    -- claims lapse and are taken over.
    claimed_by       text,
    claimed_until    timestamptz,
    -- The handler's response as the caller would have got it ({statusCode, headers, body}),
    -- sealed like the payload.
    response         bytea,
    error            text,
    created_at       timestamptz not null default now(),
    updated_at       timestamptz not null default now(),
    completed_at     timestamptz,
    primary key (tenant_id, id),
    foreign key (tenant_id, app_name) references apps (tenant_id, name) on delete cascade
);
create trigger webhook_invocations_updated_at before update on webhook_invocations
    for each row execute function shoal_set_updated_at();
-- What a dispatcher looks for: queued rows that are due, running rows whose claim lapsed.
create index webhook_invocations_due on webhook_invocations (next_attempt_at)
    where status = 'queued';
create index webhook_invocations_lapsed on webhook_invocations (claimed_until)
    where status = 'running';
-- What pruning looks for.
create index webhook_invocations_completed on webhook_invocations (completed_at)
    where completed_at is not null;

alter table webhook_invocations enable row level security;
alter table webhook_invocations force row level security;
create policy tenant_isolation on webhook_invocations
    using (tenant_id = shoal_current_tenant()) with check (tenant_id = shoal_current_tenant());
-- The dispatcher serves every tenant: a transaction that declares itself the dispatcher
-- (transaction-local, set only by the two functions below) may claim and prune any tenant's
-- invocations. Everything else it does to a row happens in a tenant-scoped transaction.
create policy webhook_dispatch on webhook_invocations
    using (current_setting('shoal.scope', true) = 'webhook-dispatch')
    with check (current_setting('shoal.scope', true) = 'webhook-dispatch');

-- Claims up to `p_limit` due invocations for `p_claimant` for `p_lease_ms`, oldest due first,
-- skipping rows another dispatcher is claiming right now. One statement, one round trip.
create function shoal_claim_webhook_invocations(p_claimant text, p_lease_ms integer, p_limit integer)
returns table (
    tenant_id text, app_name text, function_name text, id uuid, attempts integer,
    payload bytea, request_id text, created_at timestamptz
)
language plpgsql volatile
as $$
#variable_conflict use_column
begin
    perform set_config('shoal.scope', 'webhook-dispatch', true);
    -- Materialized: run once. As a plain subquery the planner may rescan it per joined row,
    -- and each rescan skips the rows just locked and yields others, past the limit.
    return query
        with due as materialized (
            select x.tenant_id, x.id
              from webhook_invocations x
             where (x.status = 'queued' and x.next_attempt_at <= now())
                or (x.status = 'running' and x.claimed_until < now())
             order by x.next_attempt_at
             limit p_limit
               for update skip locked
        )
        update webhook_invocations w
           set status = 'running',
               attempts = w.attempts + 1,
               claimed_by = p_claimant,
               claimed_until = now() + p_lease_ms * interval '1 millisecond'
          from due
         where w.tenant_id = due.tenant_id and w.id = due.id
        returning w.tenant_id, w.app_name, w.function_name, w.id, w.attempts, w.payload,
                  w.request_id, w.created_at;
end;
$$;

-- Deletes invocations completed more than `p_retention_ms` ago; returns how many.
create function shoal_prune_webhook_invocations(p_retention_ms bigint)
returns bigint
language plpgsql volatile
as $$
declare
    pruned bigint;
begin
    perform set_config('shoal.scope', 'webhook-dispatch', true);
    delete from webhook_invocations
     where completed_at < now() - p_retention_ms * interval '1 millisecond';
    get diagnostics pruned = row_count;
    return pruned;
end;
$$;

-- A queued invocation wakes the dispatchers at once instead of at their next poll.
-- Statement-level, once per enqueueing statement, with an empty payload: every dispatcher may
-- take any tenant's work.
create function shoal_notify_webhook_invocation() returns trigger language plpgsql as $$
begin
    perform pg_notify('shoal_webhook_invocations', '');
    return null;
end
$$;
create trigger webhook_invocations_notify after insert on webhook_invocations
    for each statement execute function shoal_notify_webhook_invocation();

do $$
begin
    if exists (select from pg_roles where rolname = 'shoal_app') then
        grant select, insert, update, delete on webhook_invocations to shoal_app;
        grant execute on function shoal_claim_webhook_invocations(text, integer, integer),
            shoal_prune_webhook_invocations(bigint), shoal_notify_webhook_invocation()
            to shoal_app;
    end if;
end
$$;
