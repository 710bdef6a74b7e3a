-- Identity and RBAC: external users, service-principal secrets, directory lookups by client id
-- or external subject, a system-assigned identity that lives and dies with its app, and change
-- notifications for the API's authorisation cache.

-- A user is an external OIDC identity (issuer + subject) registered in one tenant.
alter table principals
    add column issuer            text,
    add column subject           text,
    add column secret_created_at timestamptz,
    add constraint principals_user_is_external
        check (kind <> 'user' or (issuer is not null and subject is not null)),
    add constraint principals_identity_of_app
        check ((kind = 'systemAssignedIdentity') = (app_name is not null));
create unique index principals_external on principals (issuer, subject) where issuer is not null;

-- The system-assigned identity goes with its app.
alter table principals
    add constraint principals_app_fk foreign key (tenant_id, app_name)
        references apps (tenant_id, name) on delete cascade;

-- The token endpoint knows only a client id, and an external token only its issuer and
-- subject: a platform-scoped transaction may read exactly the one principal it names (the
-- setting is transaction-local), and nothing else.
create policy directory_lookup on principals for select
    using (client_id::text = current_setting('shoal.lookup_client_id', true)
        or (issuer = current_setting('shoal.lookup_issuer', true)
            and subject = current_setting('shoal.lookup_subject', true)));

-- Contributor manages everything but access (assignments, definitions), the secrets that
-- let one act as the app (its webhook signing secret and identity endpoint) and the
-- platform's signing keys.
update role_definitions
   set permissions = '{"actions": ["*"], "notActions": ["Shoal/roleAssignments/write", "Shoal/roleAssignments/delete", "Shoal/roleDefinitions/write", "Shoal/roleDefinitions/delete", "Shoal/apps/signingSecret/*", "Shoal/apps/identityEndpoint/*", "Shoal/signingKeys/*"], "dataActions": [], "notDataActions": []}'
 where id = 'b24988ac-6180-42a0-ab88-20f7382dd24c';

create index role_assignments_principal on role_assignments (principal_id);

-- Foreign-key checks bypass row-level security, so the tenant is part of the key: an
-- assignment can only name a principal of its own tenant, and only a built-in role or one of
-- its own tenant's custom roles.
alter table principals add constraint principals_tenant_id_key unique (tenant_id, id);
alter table role_assignments
    add constraint role_assignments_principal_same_tenant
        foreign key (tenant_id, principal_id) references principals (tenant_id, id) on delete cascade;

create or replace function shoal_check_assignment_role() returns trigger as $$
begin
    if not exists (select from role_definitions d
                   where d.id = new.role_definition_id
                     and (d.tenant_id is null or d.tenant_id = new.tenant_id)) then
        raise exception 'role definition % is not visible to tenant %', new.role_definition_id, new.tenant_id
            using errcode = 'foreign_key_violation';
    end if;
    return new;
end;
$$ language plpgsql;
create trigger role_assignments_role_visible before insert or update on role_assignments
    for each row execute function shoal_check_assignment_role();

-- Any change to who exists or who may do what empties every API process's cache.
create or replace function shoal_notify_rbac() returns trigger as $$
begin
    perform pg_notify('shoal_rbac', '');
    return null;
end;
$$ language plpgsql;

create trigger principals_notify after insert or update or delete on principals
    for each statement execute function shoal_notify_rbac();
create trigger role_assignments_notify after insert or update or delete on role_assignments
    for each statement execute function shoal_notify_rbac();
create trigger role_definitions_notify after insert or update or delete on role_definitions
    for each statement execute function shoal_notify_rbac();
-- Deleting a tenant cascades to all three, which fires their triggers too.

do $$
begin
    if exists (select from pg_roles where rolname = 'shoal_app') then
        grant execute on function shoal_notify_rbac() to shoal_app;
        grant execute on function shoal_check_assignment_role() to shoal_app;
    end if;
end
$$;
