//! `shoal local-bus`: the local Service Bus stand-in (crate `shoal-local-bus`) as a process of
//! its own, so a Compose file or a laptop cluster can give its apps a Service Bus namespace
//! without `shoal dev`. It is a stand-in for development, not Azure Service Bus, and keeps
//! everything in memory: a restart loses the messages (docs/local-bus.md).

use anyhow::Context;
use shoal_local_bus::{LocalBus, LocalBusConfig};

use crate::cli::LocalBusArgs;
use crate::signals::shutdown_on_signal;

pub async fn run(args: LocalBusArgs) -> anyhow::Result<()> {
    let config = match &args.config {
        Some(path) => LocalBusConfig::from_file(path)
            .with_context(|| format!("--config {}", path.display()))?,
        None => LocalBusConfig::default(),
    };
    let shutdown = shutdown_on_signal();
    let bus = LocalBus::start_on(args.listen, config)
        .await
        .with_context(|| format!("--listen {}", args.listen))?;
    println!("{}", banner(&bus, &args));
    shutdown.cancelled().await;
    bus.shutdown().await;
    Ok(())
}

/// What clients need, on stdout: the entities, and the connection strings under the name they
/// reach the stand-in by.
fn banner(bus: &LocalBus, args: &LocalBusArgs) -> String {
    // `0.0.0.0` is where it listens, not an address to dial.
    let host = match &args.host {
        Some(host) => host.clone(),
        None if args.listen.ip().is_unspecified() => "localhost".to_owned(),
        None => args.listen.ip().to_string(),
    };
    let (manage, listen_only) = bus.connection_strings_via(&host);
    format!(
        "Local Service Bus stand-in on {listen} (AMQP 1.0 and the management API, in memory; a \
         stand-in for development, not Azure Service Bus — see docs/local-bus.md)\n  \
         {entities}\n  \
         connection string {manage}\n  \
         listen-only connection string {listen_only}\n  \
         management API http://{host}:{port}/",
        listen = args.listen,
        entities = bus.entities(),
        port = bus.port(),
    )
}
