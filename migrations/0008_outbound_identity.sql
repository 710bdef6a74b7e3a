-- Outbound identity: a tenant's identity-based connections act as its apps' own identities
-- (workload identity federation). Only where a platform administrator sets
-- `allow_host_identity` do they act as the worker host's identity instead (single-tenant
-- installs). Tenants are written at platform scope only, so no tenant can set it for itself.
alter table tenants add column allow_host_identity boolean not null default false;
