//! The socket `lapin` reads a broker through: a TCP (or TLS) stream whose incoming bytes pass
//! [`ContentFilter`] first, so what the broker sends is bounded before `lapin` buffers it
//! (see `frames.rs`), and whose outgoing bytes the filter reads too, for the prefetch and
//! settlements the broker is held to (see `unsettled.rs`).
//!
//! `lapin` takes its stream type from the runtime it is given (`Reactor::TcpStream`), so the
//! runtime handed to it is tokio's with this stream type in place of tokio's own; the
//! connection itself is dialled by `super::connect`, never by that runtime.

use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::{Duration, Instant};

use futures::Stream;
use futures::io::{AsyncRead, AsyncWrite, IoSlice};
use std::os::fd::{AsFd, AsRawFd};

use async_rs::traits::Reactor;
use async_rs::util::RuntimeParts;
use async_rs::{Runtime, Tokio};
use lapin::tcp::AsyncTcpStream;

use super::frames::{ContentFilter, Oversized};

/// Tokio's TCP stream as `lapin`'s runtime names it.
type TokioStream = <Tokio as Reactor>::TcpStream;

/// How much is read from the socket at once.
const READ_CHUNK: usize = 16 * 1024;

/// The runtime `lapin` is given: tokio's executor, and [`Filtered`] for its streams.
pub type FilteredRuntime = Runtime<RuntimeParts<Tokio, FilteredReactor>>;

pub fn runtime() -> FilteredRuntime {
    Runtime::new(RuntimeParts::new(
        Tokio::current(),
        FilteredReactor(Tokio::current()),
    ))
}

/// A dialled stream (plain or TLS) with its incoming bytes filtered.
pub struct Filtered {
    inner: AsyncTcpStream<TokioStream>,
    filter: ContentFilter,
    /// Filtered bytes `lapin` has not read yet, from `read_at`.
    out: Vec<u8>,
    read_at: usize,
    chunk: Box<[u8]>,
}

impl Filtered {
    /// `inner` with bodies over `max_body` bytes dropped and noted in `oversized`.
    pub fn new(
        inner: AsyncTcpStream<TokioStream>,
        max_body: u64,
        oversized: Arc<Oversized>,
    ) -> Filtered {
        Filtered {
            inner,
            filter: ContentFilter::new(max_body, oversized),
            out: Vec::new(),
            read_at: 0,
            chunk: vec![0; READ_CHUNK].into_boxed_slice(),
        }
    }
}

impl fmt::Debug for Filtered {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Filtered").finish_non_exhaustive()
    }
}

impl AsyncRead for Filtered {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        if buf.is_empty() {
            return Poll::Ready(Ok(0));
        }
        loop {
            if this.read_at < this.out.len() {
                let n = buf.len().min(this.out.len() - this.read_at);
                buf[..n].copy_from_slice(&this.out[this.read_at..this.read_at + n]);
                this.read_at += n;
                if this.read_at == this.out.len() {
                    this.out.clear();
                    this.read_at = 0;
                }
                return Poll::Ready(Ok(n));
            }
            let n = ready!(Pin::new(&mut this.inner).poll_read(cx, &mut this.chunk))?;
            if n == 0 {
                return Poll::Ready(Ok(0));
            }
            // A partial frame yields nothing yet: read on (the socket says when to wait).
            this.filter
                .push(&this.chunk[..n], &mut this.out)
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        }
    }
}

impl AsyncWrite for Filtered {
    // What the socket took is what the broker will read: the filter sees exactly that.
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        let n = ready!(Pin::new(&mut this.inner).poll_write(cx, buf))?;
        this.filter.sent(&buf[..n]);
        Poll::Ready(Ok(n))
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        let n = ready!(Pin::new(&mut this.inner).poll_write_vectored(cx, bufs))?;
        let mut left = n;
        for buf in bufs {
            let taken = left.min(buf.len());
            this.filter.sent(&buf[..taken]);
            left -= taken;
            if left == 0 {
                break;
            }
        }
        Poll::Ready(Ok(n))
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_close(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_close(cx)
    }
}

/// Tokio's reactor, with [`Filtered`] as its stream type.
#[derive(Clone, Debug)]
pub struct FilteredReactor(Tokio);

impl Reactor for FilteredReactor {
    type TcpStream = Filtered;
    type Sleep = <Tokio as Reactor>::Sleep;

    // `async_rs`'s bound is its `AsSysFd`, which on Unix is `AsFd + AsRawFd` under a name it
    // does not export; these bounds follow from it.
    fn register<H: io::Read + io::Write + AsFd + AsRawFd + Send + 'static>(
        &self,
        socket: H,
    ) -> io::Result<impl AsyncRead + AsyncWrite + Send + Unpin + 'static> {
        self.0.register(socket)
    }

    fn sleep(&self, dur: Duration) -> Self::Sleep {
        self.0.sleep(dur)
    }

    fn interval(&self, dur: Duration) -> impl Stream<Item = Instant> + Send + 'static {
        self.0.interval(dur)
    }

    /// Never used: `super::connect` dials each connection itself, where the egress policy
    /// allows, and hands `lapin` the stream.
    fn tcp_connect_addr(
        &self,
        addr: SocketAddr,
    ) -> impl Future<Output = io::Result<Filtered>> + Send + 'static {
        std::future::ready(Err(io::Error::other(format!(
            "{addr}: broker connections are dialled through the egress policy"
        ))))
    }
}
