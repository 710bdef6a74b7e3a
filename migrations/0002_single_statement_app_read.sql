-- Reading one app is the hottest query. Done as begin / set tenant / select / commit it costs
-- four round trips; this function does the same in one statement: it sets the tenant for the
-- statement's own (implicit) transaction and then selects, so row-level security applies
-- exactly as in a tenant-scoped transaction. SECURITY INVOKER (the default): it runs with the
-- caller's rights and policies.
create function shoal_read_app(p_tenant text, p_name text)
returns table (
    name text, spec jsonb, etag uuid, created_at timestamptz, updated_at timestamptz,
    names text[], vals bytea[], secrets boolean[]
)
language plpgsql volatile
as $$
begin
    perform set_config('shoal.tenant_id', p_tenant, true);
    return query
        select a.name, a.spec, a.etag, a.created_at, a.updated_at, s.names, s.vals, s.secrets
        from apps a
        cross join lateral (
            select coalesce(array_agg(x.name order by x.name), '{}') as names,
                   coalesce(array_agg(x.value order by x.name), '{}') as vals,
                   coalesce(array_agg(x.secret order by x.name), '{}') as secrets
            from app_settings x
            where x.tenant_id = a.tenant_id and x.app_name = a.name
        ) s
        where a.tenant_id = p_tenant and a.name = p_name;
end;
$$;

do $$
begin
    if exists (select from pg_roles where rolname = 'shoal_app') then
        grant execute on function shoal_read_app(text, text) to shoal_app;
    end if;
end
$$;
