//! AMQP 0-9-1 brokers (RabbitMQ) through `lapin`, every connection dialled only where the
//! egress policy allows.
//!
//! The broker's name is resolved through the policy (every address it resolves to allowed, see
//! `Egress::resolve`) and the socket is opened to one of those addresses, never to the name
//! again, so a name that answers differently the second time (DNS rebinding) cannot lead the
//! connection inside; `amqps://` then speaks TLS to the name, validating the broker's
//! certificate. Errors never show the URI's credentials.

use std::io;

use lapin::options::ConfirmSelectOptions;
use lapin::tcp::{AsyncTcpStream, TLSConfig};
use lapin::uri::{AMQPScheme, AMQPUri};
use lapin::{Channel, Connection, ConnectionProperties};
use shoal_domain::trigger_source::without_credentials;
use shoal_egress::{Egress, EgressError};

pub use lapin;

/// Why a broker could not be reached.
#[derive(Debug, thiserror::Error)]
pub enum AmqpError {
    /// The egress policy refused the broker's address.
    #[error("{address}: {message}")]
    Refused { address: String, message: String },
    #[error("the AMQP URI does not parse")]
    Uri,
    /// Connecting, or the broker's answer.
    #[error("{address}: {source}")]
    Broker {
        address: String,
        #[source]
        source: lapin::Error,
    },
}

impl AmqpError {
    /// A stable label for metrics.
    pub fn label(&self) -> &'static str {
        match self {
            AmqpError::Refused { .. } => "egress_refused",
            AmqpError::Uri => "uri",
            AmqpError::Broker { .. } => "broker",
        }
    }
}

/// A connection to the broker `uri` names, as `name` (shown in the broker's connection list),
/// dialled where `egress` allows.
pub async fn connect(uri: &str, egress: &Egress, name: &str) -> Result<Connection, AmqpError> {
    let address = without_credentials(uri);
    let parsed: AMQPUri = uri.parse().map_err(|_| AmqpError::Uri)?;
    // Checked here first for a clear refusal; the dial below checks again each time it runs.
    egress
        .resolve(&parsed.authority.host, parsed.authority.port)
        .await
        .map_err(|e| refused(&address, e))?;
    let runtime = lapin::runtime::default_runtime().map_err(|source| AmqpError::Broker {
        address: address.clone(),
        source,
    })?;
    let egress = egress.clone();
    let properties = ConnectionProperties::default().with_connection_name(name.into());
    Connection::connector(
        parsed,
        runtime,
        async move |uri: AMQPUri, runtime| {
            let host = uri.authority.host.clone();
            let addresses = egress
                .resolve(&host, uri.authority.port)
                .await
                .map_err(|e| lapin::Error::from(io::Error::other(e.to_string())))?;
            let mut last = io::Error::other("no address to dial");
            for address in addresses {
                match AsyncTcpStream::connect(&runtime, address).await {
                    Ok(stream) => {
                        return Ok(match uri.scheme {
                            AMQPScheme::AMQP => stream,
                            AMQPScheme::AMQPS => {
                                stream.into_tls(&host, TLSConfig::default()).await?
                            }
                        });
                    }
                    Err(e) => last = e,
                }
            }
            Err(lapin::Error::from(last))
        },
        properties,
    )
    .await
    .map_err(|source| AmqpError::Broker { address, source })
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
) -> Result<(Connection, Channel), AmqpError> {
    let connection = connect(uri, egress, name).await?;
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
    Ok((connection, channel))
}

fn refused(address: &str, error: EgressError) -> AmqpError {
    AmqpError::Refused {
        address: address.to_owned(),
        message: error.to_string(),
    }
}
