-- A function's latest failures are read newest first by when they failed (`at`), not by row
-- id: workers write in batches every few seconds, so ids follow the flushes, not the failures.
drop index invocation_failures_function;
create index invocation_failures_function
    on invocation_failures (tenant_id, app_name, function_name, at desc, id desc);
