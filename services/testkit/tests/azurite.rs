//! The Azurite launcher against the real binary.

use std::time::Duration;

use anyhow::{Result, bail};
use shoal_testkit::azurite::Azurite;

/// Waits until nothing accepts connections on `port` any more.
async fn wait_until_closed(port: u16, timeout: Duration) -> Result<()> {
    let deadline = tokio::time::Instant::now() + timeout;
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_ok()
    {
        if tokio::time::Instant::now() >= deadline {
            bail!("port {port} still accepts connections after {timeout:?}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Ok(())
}

#[tokio::test]
async fn instances_get_their_own_ports_and_stop_when_dropped() -> Result<()> {
    let (first, second) = tokio::try_join!(Azurite::start(), Azurite::start())?;
    assert_ne!(first.port(), second.port());
    assert_eq!(
        first.queue_endpoint(),
        format!("http://127.0.0.1:{}/devstoreaccount1", first.port())
    );
    assert!(
        first
            .connection_string()
            .ends_with(&format!(";QueueEndpoint={}", first.queue_endpoint()))
    );
    let port = first.port();

    drop(first);

    wait_until_closed(port, Duration::from_secs(10)).await?;
    tokio::net::TcpStream::connect(("127.0.0.1", second.port())).await?;
    Ok(())
}

#[tokio::test]
async fn requests_are_counted_from_the_access_log() -> Result<()> {
    let azurite = Azurite::start().await?;
    let url = format!("{}/counted?comp=metadata", azurite.queue_endpoint());

    for _ in 0..3 {
        // Unauthenticated: refused, but logged all the same.
        raw_get(&url).await?;
    }

    let seen = azurite
        .wait_for_requests(3, Duration::from_secs(5), |line| {
            line.contains("GET /devstoreaccount1/counted?comp=metadata")
        })
        .await?;
    assert_eq!(seen, 3);
    assert_eq!(azurite.requests_containing("/elsewhere"), 0);
    Ok(())
}

#[tokio::test]
async fn oauth_instance_serves_https_and_a_token_endpoint() -> Result<()> {
    let azurite = Azurite::start_oauth().await?;

    assert!(
        azurite
            .https_queue_endpoint()
            .starts_with("https://127.0.0.1:")
    );
    assert!(azurite.ca_pem().starts_with("-----BEGIN CERTIFICATE-----"));
    assert_eq!(
        std::fs::read_to_string(azurite.ca_file())?,
        azurite.ca_pem()
    );
    assert!(azurite.authority_host().starts_with("https://127.0.0.1:"));
    assert_eq!(azurite.token_requests(), 0);
    let settings = azurite.client_secret_settings("Q");
    assert!(
        settings
            .iter()
            .any(|(k, v)| k == "Q__authorityHost" && *v == azurite.authority_host())
    );
    Ok(())
}

/// A bare HTTP/1.1 GET (the testkit has no HTTP client; the status does not matter here).
async fn raw_get(url: &str) -> Result<()> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let url = url::Url::parse(url)?;
    let host = url.host_str().unwrap_or("127.0.0.1");
    let port = url.port().unwrap_or(80);
    let mut stream = tokio::net::TcpStream::connect((host, port)).await?;
    let target = format!("{}?{}", url.path(), url.query().unwrap_or_default());
    stream
        .write_all(
            format!(
                "GET {target} HTTP/1.1\r\nHost: {host}:{port}\r\nx-ms-version: 2025-11-05\r\nConnection: close\r\n\r\n"
            )
            .as_bytes(),
        )
        .await?;
    let mut response = Vec::new();
    stream.read_to_end(&mut response).await?;
    Ok(())
}
