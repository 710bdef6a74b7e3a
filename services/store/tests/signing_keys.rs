//! Signing key rotation: the new key signs, older keys get a deadline (never a later one than
//! they had), and keys past their deadline are no longer returned.

use std::time::Duration;

use shoal_store::crypto::{Cipher, SecretKey};
use shoal_store::pool::{PoolConfig, connect_lazy, migrate};
use shoal_store::signing_keys::{self, SigningKey};
use shoal_store::{Tx, begin_platform};
use shoal_testkit::ScratchDatabase;

fn key(kid: &str) -> SigningKey {
    SigningKey {
        kid: kid.into(),
        algorithm: "ES256".into(),
        private_pkcs8: kid.as_bytes().to_vec(),
        public_jwk: serde_json::json!({"kid": kid}),
        verify_until: None,
    }
}

async fn kids(tx: &mut Tx, cipher: &Cipher) -> Vec<(String, bool)> {
    signing_keys::active(tx, cipher)
        .await
        .unwrap()
        .into_iter()
        .map(|k| (k.kid, k.verify_until.is_some()))
        .collect()
}

#[tokio::test]
async fn rotation_gives_older_keys_a_deadline_and_only_ever_shortens_it() -> anyhow::Result<()> {
    let db = ScratchDatabase::create(&shoal_testkit::admin_url(), "shoal_store").await?;
    migrate(db.url()).await?;
    let pool = connect_lazy(db.url(), &PoolConfig::default())?;
    let cipher = Cipher::new(&SecretKey::generate());
    let mut tx = begin_platform(&pool).await?;
    signing_keys::insert(&mut tx, &cipher, &key("a")).await?;
    // Each step in its own transaction, as rotations happen (`now()` is per transaction).
    shoal_store::commit(tx).await?;
    let mut tx = begin_platform(&pool).await?;

    let retiring =
        signing_keys::rotate(&mut tx, &cipher, &key("b"), Duration::from_secs(3600)).await?;
    assert_eq!(retiring.len(), 1);
    assert_eq!(retiring[0].kid, "a");
    let a_until = retiring[0].verify_until;
    let from_now = a_until - chrono::Utc::now();
    assert!(from_now > chrono::Duration::minutes(59) && from_now <= chrono::Duration::hours(1));
    // The signing key (no deadline) comes first; private keys round-trip through the cipher.
    assert_eq!(
        kids(&mut tx, &cipher).await,
        vec![("b".into(), false), ("a".into(), true)]
    );
    let active = signing_keys::active(&mut tx, &cipher).await?;
    assert_eq!(active[1].private_pkcs8, b"a");
    shoal_store::commit(tx).await?;
    let mut tx = begin_platform(&pool).await?;

    // A longer grace does not extend a's deadline; b gets the new, longer one.
    let retiring =
        signing_keys::rotate(&mut tx, &cipher, &key("c"), Duration::from_secs(7200)).await?;
    let until = |kid: &str| retiring.iter().find(|k| k.kid == kid).unwrap().verify_until;
    assert_eq!(
        retiring.iter().map(|k| k.kid.as_str()).collect::<Vec<_>>(),
        vec!["b", "a"]
    );
    assert_eq!(until("a"), a_until);
    assert!(until("b") > a_until);
    shoal_store::commit(tx).await?;
    let mut tx = begin_platform(&pool).await?;

    // An emergency rotation without grace cuts every older key off at once.
    signing_keys::rotate(&mut tx, &cipher, &key("d"), Duration::ZERO).await?;
    assert_eq!(kids(&mut tx, &cipher).await, vec![("d".into(), false)]);
    shoal_store::commit(tx).await?;
    let mut tx = begin_platform(&pool).await?;
    // The next rotation marks the keys past their deadline retired.
    signing_keys::rotate(&mut tx, &cipher, &key("e"), Duration::from_secs(60)).await?;
    let retired: i64 =
        sqlx::query_scalar("select count(*) from signing_keys where retired_at is not null")
            .fetch_one(&mut *tx)
            .await?;
    assert_eq!(retired, 3);
    assert_eq!(
        kids(&mut tx, &cipher).await,
        vec![("e".into(), false), ("d".into(), true)]
    );
    shoal_store::commit(tx).await?;
    Ok(())
}
