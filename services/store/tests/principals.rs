//! Principals and roles against Postgres: the built-in definitions the migrations store are the
//! ones the domain evaluates operator tokens with; the directory lookups see exactly the one
//! principal they name; deleting a principal takes its assignments; a system-assigned identity
//! goes with its app; an external user is registered per tenant.

use serde_json::json;
use shoal_domain::names::TenantName;
use shoal_domain::rbac::{Scope, built_in_roles};
use shoal_store::crypto::{Cipher, SecretKey};
use shoal_store::pool::{MIGRATOR, PoolConfig, connect_lazy, migrate};
use shoal_store::principals::{self, NewPrincipal, PrincipalKind};
use shoal_store::tenants::TenantWrite;
use shoal_store::{
    Precondition, StoreError, TenantId, apps, begin_platform, begin_tenant, roles, tenants,
};
use shoal_testkit::ScratchDatabase;

async fn setup() -> anyhow::Result<(ScratchDatabase, sqlx::PgPool)> {
    let db = ScratchDatabase::create(&shoal_testkit::admin_url(), "shoal_store").await?;
    migrate(db.url()).await?;
    let pool = connect_lazy(db.url(), &PoolConfig::default())?;
    put_tenants(&pool).await?;
    Ok((db, pool))
}

/// Tenants contoso and fabrikam.
async fn put_tenants(pool: &sqlx::PgPool) -> anyhow::Result<()> {
    let mut tx = begin_platform(pool).await?;
    for name in ["contoso", "fabrikam"] {
        let write = TenantWrite {
            display_name: name.into(),
            limits: Default::default(),
            allow_host_identity: false,
            egress_allow: Vec::new(),
        };
        tenants::put(&mut tx, name, &write, Precondition::None).await?;
    }
    shoal_store::commit(tx).await?;
    Ok(())
}

fn tenant(name: &str) -> TenantId {
    TenantId::new(TenantName::parse(name).unwrap())
}

fn new(kind: PrincipalKind, name: &str) -> NewPrincipal<'_> {
    NewPrincipal::named(kind, name)
}

#[tokio::test]
async fn stored_built_in_roles_are_the_domains() -> anyhow::Result<()> {
    let (_db, pool) = setup().await?;
    let mut tx = begin_tenant(&pool, &tenant("contoso")).await?;
    let mut stored: Vec<_> = roles::definitions(&mut tx, &tenant("contoso"))
        .await?
        .into_iter()
        .map(|d| d.to_domain())
        .collect::<Result<_, _>>()?;
    let mut domain = built_in_roles();
    stored.sort_by_key(|r| r.id);
    domain.sort_by_key(|r| r.id);
    assert_eq!(stored, domain);
    Ok(())
}

#[tokio::test]
async fn client_lookups_see_only_the_named_principal_and_check_the_secret() -> anyhow::Result<()> {
    let (_db, pool) = setup().await?;
    let contoso = tenant("contoso");
    let mut tx = begin_tenant(&pool, &contoso).await?;
    let (sp, created) = principals::ensure(
        &mut tx,
        &contoso,
        &new(PrincipalKind::ServicePrincipal, "ci"),
    )
    .await?;
    assert!(created);
    principals::set_secret(&mut tx, &contoso, sp.id, "s3cret-value-of-enough-length").await?;
    let (other, _) = principals::ensure(
        &mut tx,
        &contoso,
        &new(PrincipalKind::ServicePrincipal, "other"),
    )
    .await?;
    shoal_store::commit(tx).await?;

    let mut tx = begin_platform(&pool).await?;
    let found =
        principals::authenticate_client(&mut tx, sp.client_id, "s3cret-value-of-enough-length")
            .await?;
    assert_eq!(found.map(|p| p.id), Some(sp.id));
    let count: i64 = sqlx::query_scalar("select count(*) from principals")
        .fetch_one(&mut *tx)
        .await?;
    assert_eq!(
        count, 1,
        "the lookup opens exactly one row to the platform transaction"
    );
    drop(tx);
    let mut tx = begin_platform(&pool).await?;
    assert!(
        principals::authenticate_client(&mut tx, sp.client_id, "wrong")
            .await?
            .is_none()
    );
    assert!(
        principals::authenticate_client(&mut tx, other.client_id, "")
            .await?
            .is_none(),
        "no secret set, nothing matches"
    );
    Ok(())
}

#[tokio::test]
async fn deleting_a_principal_or_its_app_takes_its_assignments() -> anyhow::Result<()> {
    let (_db, pool) = setup().await?;
    let contoso = tenant("contoso");
    let cipher = Cipher::new(&SecretKey::generate());
    let mut tx = begin_tenant(&pool, &contoso).await?;
    apps::put(
        &mut tx,
        &contoso,
        &cipher,
        "orders",
        &json!({"handler": {"url": "http://h.example"}}),
        &[],
        Precondition::None,
    )
    .await?;
    let mut system = new(PrincipalKind::SystemAssignedIdentity, "orders");
    system.app_name = Some("orders");
    let (mi, _) = principals::ensure(&mut tx, &contoso, &system).await?;
    let (uami, _) = principals::ensure(
        &mut tx,
        &contoso,
        &new(PrincipalKind::UserAssignedIdentity, "shared"),
    )
    .await?;
    let scope = Scope::parse("/tenants/contoso")?;
    let reader = shoal_domain::rbac::READER_ID;
    for id in [mi.id, uami.id] {
        roles::create_assignment(&mut tx, &contoso, uuid_v4(), id, reader, &scope).await?;
    }
    assert_eq!(
        roles::held_by(&mut tx, &contoso, mi.id)
            .await?
            .map(|h| h.len()),
        Some(1)
    );
    assert!(
        principals::delete(
            &mut tx,
            &contoso,
            PrincipalKind::UserAssignedIdentity,
            "shared"
        )
        .await?
    );
    assert_eq!(
        roles::held_by(&mut tx, &contoso, uami.id).await?,
        None,
        "gone, not merely unassigned"
    );
    apps::delete(&mut tx, &contoso, "orders", Precondition::None).await?;
    assert_eq!(
        roles::held_by(&mut tx, &contoso, mi.id).await?,
        None,
        "the app took its identity"
    );
    assert_eq!(roles::assignments(&mut tx, &contoso, None).await?.len(), 0);
    // Another tenant cannot see or assign contoso's principals.
    shoal_store::commit(tx).await?;
    let fabrikam = tenant("fabrikam");
    let mut tx = begin_tenant(&pool, &fabrikam).await?;
    let (theirs, _) = principals::ensure(
        &mut tx,
        &fabrikam,
        &new(PrincipalKind::UserAssignedIdentity, "x"),
    )
    .await?;
    shoal_store::commit(tx).await?;
    let mut tx = begin_tenant(&pool, &contoso).await?;
    assert!(
        principals::by_id(&mut tx, &contoso, theirs.id)
            .await?
            .is_none()
    );
    let err =
        roles::create_assignment(&mut tx, &contoso, uuid_v4(), theirs.id, reader, &scope).await;
    assert!(
        err.is_err(),
        "row-level security and the foreign key refuse it"
    );
    Ok(())
}

fn uuid_v4() -> uuid::Uuid {
    uuid::Uuid::new_v4()
}

/// An app's identities for outbound connections are only its own: a user-assigned identity it
/// lists that exists only in another tenant is not found, and a system-assigned identity counts
/// only while `identity.type` has one.
#[tokio::test]
async fn app_identities_are_the_apps_own_in_its_tenant() -> anyhow::Result<()> {
    use shoal_domain::apps::{Identity, IdentityType};
    let (_db, pool) = setup().await?;
    let (contoso, fabrikam) = (tenant("contoso"), tenant("fabrikam"));
    let mut tx = begin_tenant(&pool, &fabrikam).await?;
    principals::ensure(
        &mut tx,
        &fabrikam,
        &new(PrincipalKind::UserAssignedIdentity, "shared"),
    )
    .await?;
    shoal_store::commit(tx).await?;
    let mut tx = begin_tenant(&pool, &contoso).await?;
    let (billing, _) = principals::ensure(
        &mut tx,
        &contoso,
        &new(PrincipalKind::UserAssignedIdentity, "billing"),
    )
    .await?;
    let identity = |kind| Identity {
        kind,
        user_assigned_identities: vec!["billing".into(), "shared".into()],
        principal_id: None,
        client_id: None,
    };
    let found = principals::app_identities(
        &mut tx,
        &contoso,
        "orders",
        &identity(IdentityType::UserAssigned),
    )
    .await?;
    let names: Vec<Option<String>> = found
        .user_assigned
        .iter()
        .map(|i| i.user_assigned.clone())
        .collect();
    assert_eq!(
        names,
        vec![Some("billing".to_string())],
        "fabrikam's 'shared' is never found"
    );
    assert_eq!(found.user_assigned[0].principal_id, billing.id);
    assert_eq!(found.user_assigned[0].client_id, billing.client_id);
    assert_eq!(found.system_assigned, None);
    assert!(!found.host_identity_allowed);
    shoal_store::commit(tx).await?;

    let mut tx = begin_platform(&pool).await?;
    let write = TenantWrite {
        display_name: "contoso".into(),
        limits: Default::default(),
        allow_host_identity: true,
        egress_allow: Vec::new(),
    };
    tenants::put(&mut tx, "contoso", &write, Precondition::None).await?;
    shoal_store::commit(tx).await?;
    let mut tx = begin_tenant(&pool, &contoso).await?;
    let found =
        principals::app_identities(&mut tx, &contoso, "orders", &identity(IdentityType::None))
            .await?;
    assert!(found.host_identity_allowed);
    assert!(found.system_assigned.is_none());
    shoal_store::commit(tx).await?;
    Ok(())
}

fn user<'a>(name: &'a str, issuer: &'a str, subject: &'a str) -> NewPrincipal<'a> {
    NewPrincipal {
        kind: PrincipalKind::User,
        name,
        app_name: None,
        issuer: Some(issuer),
        subject: Some(subject),
    }
}

const ISSUER: &str = "https://login.example.com/x/v2.0";

/// One external account registered by two tenants: each registration stands on its own, a
/// second name for it within a tenant is a conflict, and the sign-in lookup reads every
/// tenant's registration of that subject and nothing else.
#[tokio::test]
async fn an_external_subject_is_registered_once_per_tenant() -> anyhow::Result<()> {
    let (_db, pool) = setup().await?;
    let mut ids = Vec::new();
    for (tenant_name, user_name) in [("fabrikam", "squatter"), ("contoso", "alice")] {
        let id = tenant(tenant_name);
        let mut tx = begin_tenant(&pool, &id).await?;
        let (record, created) =
            principals::ensure(&mut tx, &id, &user(user_name, ISSUER, "oid-1")).await?;
        assert!(created, "{tenant_name}");
        principals::ensure(&mut tx, &id, &user("bob", ISSUER, "oid-2")).await?;
        shoal_store::commit(tx).await?;
        ids.push((tenant_name, record.id));
    }

    let contoso = tenant("contoso");
    let mut tx = begin_tenant(&pool, &contoso).await?;
    let again = principals::ensure(&mut tx, &contoso, &user("alice-2", ISSUER, "oid-1")).await;
    assert!(
        matches!(&again, Err(StoreError::Conflict(m)) if m.contains("of this tenant")),
        "{again:?}"
    );
    drop(tx);
    let mut tx = begin_tenant(&pool, &contoso).await?;
    let (bob, _) = principals::ensure(&mut tx, &contoso, &user("bob", ISSUER, "oid-2")).await?;
    let moved = principals::set_external(&mut tx, &contoso, bob.id, ISSUER, "oid-1").await;
    assert!(matches!(moved, Err(StoreError::Conflict(_))), "{moved:?}");
    drop(tx);

    let mut tx = begin_platform(&pool).await?;
    let found = principals::find_external(&mut tx, ISSUER, "oid-1").await?;
    let found: Vec<(String, uuid::Uuid)> = found.into_iter().map(|p| (p.tenant, p.id)).collect();
    let mut expected: Vec<(String, uuid::Uuid)> =
        ids.iter().map(|(t, id)| (t.to_string(), *id)).collect();
    expected.sort();
    assert_eq!(found, expected, "both registrations, by tenant name");
    let visible: i64 = sqlx::query_scalar("select count(*) from principals")
        .fetch_one(&mut *tx)
        .await?;
    assert_eq!(visible, 2, "the lookup opens only the subject's rows");
    assert!(
        principals::find_external(&mut tx, "https://other.example.com", "oid-1")
            .await?
            .is_empty()
    );
    Ok(())
}

/// Users registered before 0013 keep their rows, ids and assignments; afterwards another
/// tenant may register the same subject.
#[tokio::test]
async fn per_tenant_users_keep_the_users_registered_before() -> anyhow::Result<()> {
    let db = ScratchDatabase::create(&shoal_testkit::admin_url(), "shoal_store").await?;
    let owner = sqlx::PgPool::connect(db.url()).await?;
    MIGRATOR.run_to(12, &owner).await?;
    let pool = connect_lazy(db.url(), &PoolConfig::default())?;
    // Written as tenants were then: today's store writes columns that later migrations add.
    for name in ["contoso", "fabrikam"] {
        sqlx::query("insert into tenants (name, display_name, etag) values ($1, $1, $2)")
            .bind(name)
            .bind(uuid_v4())
            .execute(&owner)
            .await?;
    }
    let contoso = tenant("contoso");
    let mut tx = begin_tenant(&pool, &contoso).await?;
    let (alice, _) = principals::ensure(&mut tx, &contoso, &user("alice", ISSUER, "oid-1")).await?;
    let scope = Scope::parse("/tenants/contoso")?;
    roles::create_assignment(
        &mut tx,
        &contoso,
        uuid_v4(),
        alice.id,
        shoal_domain::rbac::READER_ID,
        &scope,
    )
    .await?;
    shoal_store::commit(tx).await?;

    MIGRATOR.run(&owner).await?;

    let mut tx = begin_tenant(&pool, &contoso).await?;
    let kept = principals::get(&mut tx, &contoso, PrincipalKind::User, "alice").await?;
    assert_eq!(kept.as_ref(), Some(&alice));
    assert_eq!(
        roles::held_by(&mut tx, &contoso, alice.id)
            .await?
            .map(|h| h.len()),
        Some(1)
    );
    drop(tx);
    let fabrikam = tenant("fabrikam");
    let mut tx = begin_tenant(&pool, &fabrikam).await?;
    let (theirs, created) =
        principals::ensure(&mut tx, &fabrikam, &user("alice", ISSUER, "oid-1")).await?;
    assert!(created);
    assert_ne!(theirs.id, alice.id);
    shoal_store::commit(tx).await?;
    owner.close().await;
    Ok(())
}
