-- Each invocation attempt's place in its trace, so the dashboard's explorer shows the trace id
-- beside the attempt (and links it to the operator's trace viewer) and finds the invocation
-- from a trace id seen in that viewer.
--
-- The ids are the W3C `traceparent` the handler received on that attempt: `trace_id` is the
-- delivery's trace (the producer's, or a new root), the same for every attempt of a message;
-- `span_id` is the attempt's own `invoke` span, the handler's parent. Stored as the lowercase
-- hex W3C writes (and trace viewers show), so a search needs no conversion. Null for rows
-- recorded before this migration.

alter table invocation_attempts
    add column trace_id text check (trace_id ~ '^[0-9a-f]{32}$' and trace_id <> repeat('0', 32)),
    add column span_id  text check (span_id ~ '^[0-9a-f]{16}$' and span_id <> repeat('0', 16));

-- The explorer's trace id filter: a tenant's attempts in one trace.
create index invocation_attempts_trace on invocation_attempts (tenant_id, trace_id)
    where trace_id is not null;
