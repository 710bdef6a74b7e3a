//! AMQP 0-9-1 brokers (RabbitMQ) through `lapin`, every connection dialled only where the
//! egress policy allows, and everything read from it bounded.
//!
//! The broker's name is resolved through the policy (every address it resolves to allowed, see
//! `Egress::resolve`) and the socket is opened to one of those addresses, never to the name
//! again, so a name that answers differently the second time (DNS rebinding) cannot lead the
//! connection inside; `amqps://` then speaks TLS to the name, validating the broker's
//! certificate. Connecting (TCP, TLS and the AMQP handshake) takes at most
//! [`CONNECT_TIMEOUT`]. Frames are at most [`MAX_FRAME`] bytes whatever the broker or
//! the URI asks, a message body over the caller's limit is never held (see `frames.rs`), and
//! a broker delivering more than the client's prefetch allows unsettled is disconnected (see
//! `unsettled.rs`).
//! Errors never show the URI's credentials.

mod frames;
pub mod headers;
mod transport;
mod unsettled;
mod wire;

#[cfg(test)]
mod test_frames;

use std::io;
use std::sync::Arc;
use std::time::Duration;

use lapin::options::ConfirmSelectOptions;
use lapin::tcp::{AsyncTcpStream, TLSConfig};
use lapin::uri::{AMQPScheme, AMQPUri};
use lapin::{Channel, Connection, ConnectionProperties};
use shoal_domain::trigger_source::without_credentials;
use shoal_egress::{Egress, EgressError};

pub use frames::Oversized;
pub use lapin;
pub use wire::MAX_FRAME;

use transport::Filtered;

/// How long connecting to a broker may take, from the first packet to the AMQP handshake's
/// end: an address that drops packets would otherwise hold the caller for the system's TCP
/// timeout (minutes).
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);

/// The body limit of a connection that consumes nothing (an output, a queue-length read): any
/// content the broker sends it anyway is dropped unread.
pub const CONSUMES_NOTHING: u64 = 0;

/// The smallest `frame_max` AMQP 0-9-1 allows (`FRAME_MIN_SIZE`).
const FRAME_MIN: u32 = 4096;

/// Why a broker could not be reached.
#[derive(Debug, thiserror::Error)]
pub enum AmqpError {
    /// The egress policy refused the broker's address.
    #[error("{address}: {message}")]
    Refused { address: String, message: String },
    #[error("the AMQP URI does not parse")]
    Uri,
    #[error("{address}: no answer within {CONNECT_TIMEOUT:?}")]
    Timeout { address: String },
    /// Connecting, or the broker's answer.
    #[error("{address}: {source}")]
    Broker {
        address: String,
        #[source]
        source: lapin::Error,
    },
}

impl AmqpError {
    /// Every label [`AmqpError::label`] returns.
    pub const LABELS: [&'static str; 4] = ["egress_refused", "uri", "timeout", "broker"];

    /// A stable label for metrics.
    pub fn label(&self) -> &'static str {
        match self {
            AmqpError::Refused { .. } => "egress_refused",
            AmqpError::Uri => "uri",
            AmqpError::Timeout { .. } => "timeout",
            AmqpError::Broker { .. } => "broker",
        }
    }
}

/// A connection to the broker `uri` names, as `name` (shown in the broker's connection list),
/// dialled where `egress` allows, taking message bodies of up to `max_body` bytes: a larger
/// one arrives empty and is noted in [`Connected::oversized`].
pub async fn connect(
    uri: &str,
    egress: &Egress,
    name: &str,
    max_body: u64,
) -> Result<Connected, AmqpError> {
    let address = without_credentials(uri);
    match tokio::time::timeout(CONNECT_TIMEOUT, dial(uri, egress, name, max_body)).await {
        Ok(connected) => connected,
        Err(_) => Err(AmqpError::Timeout { address }),
    }
}

/// A connection and what its filter noted (see [`connect`]).
pub struct Connected {
    pub connection: Connection,
    /// Deliveries whose bodies were over the limit, by channel and delivery tag.
    pub oversized: Arc<Oversized>,
}

async fn dial(
    uri: &str,
    egress: &Egress,
    name: &str,
    max_body: u64,
) -> Result<Connected, AmqpError> {
    let address = without_credentials(uri);
    let mut parsed: AMQPUri = uri.parse().map_err(|_| AmqpError::Uri)?;
    // lapin takes the broker's frame_max when it names none (0), however large.
    parsed.query.frame_max = Some(match parsed.query.frame_max {
        Some(asked) if asked != 0 => asked.clamp(FRAME_MIN, MAX_FRAME),
        _ => MAX_FRAME,
    });
    // Checked here first for a clear refusal; the dial below checks again each time it runs.
    egress
        .resolve(&parsed.authority.host, parsed.authority.port)
        .await
        .map_err(|e| refused(&address, e))?;
    let sockets = lapin::runtime::default_runtime().map_err(|source| AmqpError::Broker {
        address: address.clone(),
        source,
    })?;
    let egress = egress.clone();
    let oversized = Arc::new(Oversized::default());
    let noted = oversized.clone();
    let properties = ConnectionProperties::default().with_connection_name(name.into());
    let connection = Connection::connector(
        parsed,
        transport::runtime(),
        async move |uri: AMQPUri, _| {
            let host = uri.authority.host.clone();
            let addresses = egress
                .resolve(&host, uri.authority.port)
                .await
                .map_err(|e| lapin::Error::from(io::Error::other(e.to_string())))?;
            let mut last = io::Error::other("no address to dial");
            for address in addresses {
                match AsyncTcpStream::connect(&sockets, address).await {
                    Ok(stream) => {
                        let stream = match uri.scheme {
                            AMQPScheme::AMQP => stream,
                            AMQPScheme::AMQPS => {
                                stream.into_tls(&host, TLSConfig::default()).await?
                            }
                        };
                        let filtered = Filtered::new(stream, max_body, noted.clone());
                        return Ok(AsyncTcpStream::Plain(filtered));
                    }
                    Err(e) => last = e,
                }
            }
            Err(lapin::Error::from(last))
        },
        properties,
    )
    .await
    .map_err(|source| AmqpError::Broker { address, source })?;
    Ok(Connected {
        connection,
        oversized,
    })
}

/// Whether a channel's publishes are confirmed by the broker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Confirms {
    /// Every publish waits for the broker's confirm (`confirm.select`): a message counts as
    /// written only once the broker has it.
    On,
    /// Nothing is published on the channel (reads only).
    Off,
}

/// A connection (see [`connect`]) and one channel on it.
pub async fn channel(
    uri: &str,
    egress: &Egress,
    name: &str,
    confirms: Confirms,
    max_body: u64,
) -> Result<Opened, AmqpError> {
    let Connected {
        connection,
        oversized,
    } = connect(uri, egress, name, max_body).await?;
    let broker = |source| AmqpError::Broker {
        address: without_credentials(uri),
        source,
    };
    let channel = connection.create_channel().await.map_err(broker)?;
    if confirms == Confirms::On {
        channel
            .confirm_select(ConfirmSelectOptions::default())
            .await
            .map_err(broker)?;
    }
    Ok(Opened {
        connection,
        channel,
        oversized,
    })
}

/// A connection with one channel (see [`channel`]).
pub struct Opened {
    pub connection: Connection,
    pub channel: Channel,
    pub oversized: Arc<Oversized>,
}

fn refused(address: &str, error: EgressError) -> AmqpError {
    AmqpError::Refused {
        address: address.to_owned(),
        message: error.to_string(),
    }
}
