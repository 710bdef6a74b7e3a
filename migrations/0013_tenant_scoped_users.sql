-- A user is registered per tenant: (tenant, issuer, subject) identifies a registration, and
-- registering a subject in one tenant says nothing about any other. The platform-wide index
-- let one tenant register another's subject first (the second got a 409) and let any tenant
-- learn from that 409 whether a subject was registered elsewhere. Within a tenant a subject is
-- still registered once, so that a token acts there as exactly one user.
--
-- Rows that were unique across the platform are unique per tenant: nothing to rewrite. The
-- index keeps its name, so the previous release (during a rolling upgrade) still answers its
-- violation with a 409.
drop index principals_external;
create unique index principals_external on principals (tenant_id, issuer, subject)
    where issuer is not null;

-- The `directory_lookup` policy (0005) stays: it opens every row with the issuer and subject
-- the sign-in names, so a platform-scoped lookup now reads the subject's registration in each
-- tenant that has one, which sign-in needs to act in each tenant as that tenant's user.
