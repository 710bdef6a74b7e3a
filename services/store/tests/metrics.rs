//! Every store operation is timed under its label in `shoal_store_operation_seconds`.

use prometheus_client::registry::Registry;
use shoal_store::pool::{PoolConfig, connect_lazy, migrate};
use shoal_store::{StoreError, begin_platform, tenants};
use shoal_testkit::ScratchDatabase;

fn encoded() -> String {
    let mut registry = Registry::with_prefix("shoal");
    shoal_store::metrics::register(&mut registry);
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, &registry).expect("encodes");
    text
}

#[tokio::test]
async fn an_operation_appears_with_its_outcome_once_it_ran() -> anyhow::Result<()> {
    let db = ScratchDatabase::create(&shoal_testkit::admin_url(), "shoal_metrics").await?;
    migrate(db.url()).await?;
    let pool = connect_lazy(db.url(), &PoolConfig::default())?;

    let mut tx = begin_platform(&pool).await?;
    let missing = tenants::get(&mut tx, "nobody").await;
    tenants::all_names(&mut tx).await?;
    shoal_store::commit(tx).await?;

    assert!(matches!(missing, Err(StoreError::NotFound)));
    let text = encoded();
    assert!(
        text.contains(
            r#"shoal_store_operation_seconds_count{operation="tenants_get",outcome="not_found"}"#
        ),
        "{text}"
    );
    assert!(
        text.contains(
            r#"shoal_store_operation_seconds_count{operation="tenants_all_names",outcome="ok"}"#
        ),
        "{text}"
    );
    Ok(())
}
