use std::time::Duration;

use serde_json::json;
use shoal_testkit::azurite::Azurite;
use shoal_testkit::handler::Behaviour;

use crate::support::*;

/// `AzureWebJobsStorage__queueServiceUri` + `__credential=clientsecret`: the worker gets a
/// token from the identity platform (the local token endpoint standing in for Entra ID) and
/// talks to Azurite over HTTPS with `--oauth basic`, trusting its CA through the worker's
/// extra-CA option.
#[tokio::test]
async fn identity_based_connection_over_https_with_oauth() -> anyhow::Result<()> {
    let azurite = Azurite::start_oauth().await?;
    let h = Harness::start_with(
        azurite,
        Behaviour::Respond(json!({"Outputs": {"out": "copied"}})),
    )
    .await?;
    h.put_app(json!({}), json!({})).await?;
    h.put_function(
        "secure",
        json!([
            {"type": "queueTrigger", "direction": "in", "name": "msg", "queueName": "secure"},
            {"type": "queue", "direction": "out", "name": "out", "queueName": "secure-out"}
        ]),
    )
    .await?;
    h.enqueue("secure", &base64("over tls")).await?;
    let worker = h.start_worker(h.worker_config("w1"))?;
    let requests = h.handler.wait_for(1, Duration::from_secs(20)).await?;
    assert_eq!(requests[0].body["Data"]["msg"], "over tls");
    let out = h
        .wait_for_messages("secure-out", 1, Duration::from_secs(20))
        .await?;
    assert_eq!(out[0].text, base64("copied"));
    h.wait_until_empty("secure", Duration::from_secs(20))
        .await?;
    assert!(
        h.azurite.token_requests() >= 1,
        "tokens came from the identity platform"
    );
    worker.shut_down().await?;
    Ok(())
}

/// Without the CA the worker cannot trust Azurite: the listener keeps polling and failing,
/// nothing is delivered, nothing panics.
#[tokio::test]
async fn untrusted_certificate_delivers_nothing() -> anyhow::Result<()> {
    let azurite = Azurite::start_oauth().await?;
    let h = Harness::start_with(azurite, Behaviour::Respond(json!({}))).await?;
    h.put_app(json!({}), json!({})).await?;
    h.put_function("secure", queue_trigger("secure")).await?;
    h.enqueue("secure", &base64("x")).await?;
    let mut config = h.worker_config("w1");
    config.connector = Default::default();
    let worker = h.start_worker(config)?;
    // A second poll starts only after the first has failed.
    h.wait_for_polls(&worker, "secure", 2, Duration::from_secs(60))
        .await?;
    assert_eq!(h.handler.count(), 0);
    assert_eq!(
        h.queue("secure").approximate_length().await?,
        1,
        "the message is still there"
    );
    worker.shut_down().await?;
    Ok(())
}
