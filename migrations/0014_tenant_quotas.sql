-- Quotas by default: a tenant's limits that are null take the platform's defaults
-- (`--tenant-defaults`), no longer "unlimited". Three more limits join apps and instances:
-- functions and settings per app, and the webhook rate an app may set. Existing rows keep what
-- they had; their null limits now mean the defaults (docs/operating/limits.md).
alter table tenants
    add column max_functions_per_app integer check (max_functions_per_app >= 0),
    add column max_settings_per_app integer check (max_settings_per_app >= 0),
    add column max_webhook_requests_per_second integer check (max_webhook_requests_per_second >= 1);
