//! A Kafka client whose every TCP connection passes the egress policy first: the one place
//! Shoal calls librdkafka's C API itself.
//!
//! librdkafka resolves broker names and dials on its own threads, and since 2.10 it goes on to
//! the brokers a cluster advertises as soon as it learns them, whatever the client asked for.
//! Its connect callback (`rd_kafka_conf_set_connect_cb`) sees every address before it is
//! dialled, but rdkafka does not wrap it, so this crate sets it on the client configuration
//! (the workspace forbids `unsafe`; this crate denies it and allows it on the two items that
//! need it). The callback checks the address with the egress policy and, when it is refused,
//! records why and answers `ECONNREFUSED` without connecting; otherwise it connects as
//! librdkafka's own default does.
//!
//! rdkafka builds its consumers and producers from a configuration of its own, where the hook
//! cannot be set, so this client serves the check made before they are built
//! (`shoal_connectors::kafka::check_cluster`): it reads the cluster's metadata without ever
//! dialling a refused address, bootstrap or advertised.

use std::ffi::{CStr, c_char, c_int, c_void};
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};
use std::sync::Mutex;

use rdkafka::ClientContext;
use rdkafka::client::Client;
use rdkafka::config::{ClientConfig, NativeClientConfig, RDKafkaLogLevel};
use rdkafka::error::KafkaResult;
use rdkafka::types::{RDKafkaErrorCode, RDKafkaType};
use shoal_egress::{Egress, EgressError};

/// The client's context: the policy its connections are checked with, and what it refused.
pub struct Guard {
    egress: Egress,
    refused: Mutex<Vec<Refused>>,
}

/// A connection the callback did not make.
#[derive(Debug, Clone)]
pub struct Refused {
    /// librdkafka's name of the broker, `host:port` (bootstrap or advertised).
    pub broker: String,
    pub error: EgressError,
}

impl Guard {
    /// Every connection refused so far, in order.
    pub fn refused(&self) -> Vec<Refused> {
        self.refused
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The decision for one address librdkafka is about to dial for `broker` (`host:port`).
    fn admit(&self, broker: &str, address: SocketAddr) -> Result<(), ()> {
        let host = broker
            .rsplit_once(':')
            .map_or(broker, |(host, _)| host)
            .trim_start_matches('[')
            .trim_end_matches(']');
        self.egress.check_address(host, address).map_err(|error| {
            self.refused
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(Refused {
                    broker: broker.to_owned(),
                    error,
                });
        })
    }
}

impl ClientContext for Guard {
    fn log(&self, level: RDKafkaLogLevel, fac: &str, message: &str) {
        tracing::debug!(target: "librdkafka", ?level, facility = fac, "{message}");
    }

    fn error(&self, error: rdkafka::error::KafkaError, reason: &str) {
        tracing::debug!(%error, reason, "Kafka client error while checking the brokers");
    }
}

/// A client of `config` (a producer that sends nothing) whose connections `egress` checks.
pub fn guarded_client(config: &ClientConfig, egress: Egress) -> KafkaResult<Client<Guard>> {
    let native = config.create_native_config()?;
    set_connect_callback(&native);
    let guard = Guard {
        egress,
        refused: Mutex::new(Vec::new()),
    };
    // `Client::new` makes the context librdkafka's opaque pointer, which the callback reads.
    Client::new(config, native, RDKafkaType::RD_KAFKA_PRODUCER, guard)
}

/// The errors the client reported while it worked (a failed sign-in, say), taken off its main
/// queue: rdkafka hands them to a context only from a consumer's or producer's poll, and a
/// metadata request that fails says no more than that the brokers were unreachable. Each is
/// librdkafka's code with its text; the queue's other events (logs) are dropped.
#[allow(unsafe_code)]
pub fn take_errors(client: &Client<Guard>) -> Vec<(RDKafkaErrorCode, String)> {
    let mut errors = Vec::new();
    // SAFETY: the client is alive for the whole call; the queue handle and every event taken
    // off it are destroyed exactly once, here; the error string is copied before its event is.
    unsafe {
        let queue = rdkafka::bindings::rd_kafka_queue_get_main(client.native_ptr());
        if queue.is_null() {
            return errors;
        }
        loop {
            let event = rdkafka::bindings::rd_kafka_queue_poll(queue, 0);
            if event.is_null() {
                break;
            }
            if rdkafka::bindings::rd_kafka_event_type(event)
                == rdkafka::bindings::RD_KAFKA_EVENT_ERROR
            {
                let code = RDKafkaErrorCode::from(rdkafka::bindings::rd_kafka_event_error(event));
                let text = rdkafka::bindings::rd_kafka_event_error_string(event);
                let text = if text.is_null() {
                    String::new()
                } else {
                    CStr::from_ptr(text).to_string_lossy().into_owned()
                };
                errors.push((code, text));
            }
            rdkafka::bindings::rd_kafka_event_destroy(event);
        }
        rdkafka::bindings::rd_kafka_queue_destroy(queue);
    }
    errors
}

#[allow(unsafe_code)]
fn set_connect_callback(native: &NativeClientConfig) {
    // SAFETY: `native` owns a live `rd_kafka_conf_t`; setting a callback on it has no other
    // requirement.
    unsafe { rdkafka::bindings::rd_kafka_conf_set_connect_cb(native.ptr(), Some(connect)) };
}

/// librdkafka's connect callback: `opaque` is the client's [`Guard`] (set by `Client::new`,
/// which keeps it alive until the client, and with it every broker thread, is destroyed);
/// `id` is the broker's `host:port`. Returns 0 or an errno, as librdkafka's own default does
/// (`EINPROGRESS` from the non-blocking socket is success).
#[allow(unsafe_code)]
unsafe extern "C" fn connect(
    sockfd: c_int,
    addr: *const libc::sockaddr,
    addrlen: c_int,
    id: *const c_char,
    opaque: *mut c_void,
) -> c_int {
    if opaque.is_null() || addr.is_null() {
        return libc::EINVAL;
    }
    // SAFETY: librdkafka passes the opaque `Client::new` set, a `Guard` that outlives the
    // client's broker threads, a valid NUL-terminated broker name (or null), and a socket
    // address of `addrlen` bytes.
    let guard = unsafe { &*(opaque as *const Guard) };
    let broker = if id.is_null() {
        String::new()
    } else {
        unsafe { CStr::from_ptr(id) }.to_string_lossy().into_owned()
    };
    let Some(address) = (unsafe { socket_addr(addr, addrlen) }) else {
        return libc::EAFNOSUPPORT;
    };
    if guard.admit(&broker, address).is_err() {
        return libc::ECONNREFUSED;
    }
    let Ok(len) = libc::socklen_t::try_from(addrlen) else {
        return libc::EINVAL;
    };
    // SAFETY: the socket and address are librdkafka's, as it would pass them to connect(2).
    if unsafe { libc::connect(sockfd, addr, len) } == 0 {
        return 0;
    }
    match std::io::Error::last_os_error().raw_os_error() {
        Some(libc::EINPROGRESS) => 0,
        Some(errno) => errno,
        None => libc::EIO,
    }
}

/// The IPv4 or IPv6 address `addr` holds.
///
/// # Safety
/// `addr` points to `len` readable bytes of a socket address.
#[allow(unsafe_code)]
unsafe fn socket_addr(addr: *const libc::sockaddr, len: c_int) -> Option<SocketAddr> {
    let len = usize::try_from(len).ok()?;
    // SAFETY: the caller's contract; each cast is checked against the length first.
    let family = c_int::from(unsafe { (*addr).sa_family });
    match family {
        libc::AF_INET if len >= std::mem::size_of::<libc::sockaddr_in>() => {
            let v4 = unsafe { &*(addr as *const libc::sockaddr_in) };
            Some(SocketAddr::V4(SocketAddrV4::new(
                Ipv4Addr::from(u32::from_be(v4.sin_addr.s_addr)),
                u16::from_be(v4.sin_port),
            )))
        }
        libc::AF_INET6 if len >= std::mem::size_of::<libc::sockaddr_in6>() => {
            let v6 = unsafe { &*(addr as *const libc::sockaddr_in6) };
            Some(SocketAddr::V6(SocketAddrV6::new(
                Ipv6Addr::from(v6.sin6_addr.s6_addr),
                u16::from_be(v6.sin6_port),
                v6.sin6_flowinfo,
                v6.sin6_scope_id,
            )))
        }
        _ => None,
    }
}
