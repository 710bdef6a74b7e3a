//! Logging: human-readable by default, JSON with `SHOAL_LOG_FORMAT=json`; level from
//! `RUST_LOG` (default [`DEFAULT_FILTER`]). Logs go to stderr so `shoal token` and `shoal
//! openapi` print only their result on stdout.
//!
//! The client libraries' own logs arrive here too: `azservicebus`, rustls and `fe2o3-amqp` (the
//! AMQP stack under `azservicebus`, built with its `log` feature: see `shoal-connectors`'
//! manifest) write through the `log` crate, which `tracing-subscriber`'s `tracing-log` feature
//! forwards into this subscriber when it is installed. `fe2o3_amqp`'s records are off unless
//! `RUST_LOG` asks for them (`RUST_LOG=info,fe2o3_amqp=debug`): at every level it reports what
//! a session listener meets all the time (each "no session free" refusal of an accept is an
//! `error` event of its link builder), so by default it would bury the lines that matter.

use std::io::IsTerminal as _;

use tracing_subscriber::EnvFilter;

/// What is logged when `RUST_LOG` is not set: Shoal's and the libraries' information and up,
/// less chatty libraries' (see the module's documentation for `fe2o3_amqp`).
pub const DEFAULT_FILTER: &str = "info,sqlx=warn,tower_http=info,fe2o3_amqp=off";

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

pub fn init(format: LogFormat) {
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(DEFAULT_FILTER));
    // Colours only for a person at a terminal: a log file or a container's log collector gets
    // plain text, not escape codes (and no process spends time writing them).
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr);
    // `init` also installs the `log` → `tracing` bridge (`tracing_log::LogTracer`).
    match format {
        LogFormat::Text => builder.init(),
        LogFormat::Json => builder.json().init(),
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::sync::{Arc, Mutex};

    use tracing_subscriber::util::SubscriberInitExt as _;

    use super::*;

    /// Everything written to it, for the test to read.
    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl Write for Captured {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn client_libraries_log_records_arrive_and_amqp_engine_chatter_stays_out_by_default() {
        let captured = Captured::default();
        let writer = captured.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_env_filter(EnvFilter::new(DEFAULT_FILTER))
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .finish();
        // As `init` does for the process: the subscriber, with the `log` bridge.
        let _guard = subscriber.set_default();

        log::error!(target: "azservicebus::amqp::amqp_cbs_link", "CBS authorization refresh failed: expired");
        log::debug!(target: "azservicebus::amqp::amqp_receiver", "a debug record");
        log::error!(target: "fe2o3_amqp::link::builder", "attach_error = no session is free");

        let text = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
        assert!(
            text.contains("CBS authorization refresh failed: expired")
                && text.contains("azservicebus::amqp::amqp_cbs_link"),
            "{text}"
        );
        assert!(!text.contains("a debug record"), "{text}");
        assert!(!text.contains("no session is free"), "{text}");
    }
}
