//! A handler that answers every request with a body of a given size, streamed, and counts the
//! connections it accepted: for showing that an answer is read only up to the cap, and that a
//! refused destination never sees a connection at all.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::Result;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::task::JoinHandle;

pub struct FloodingHandler {
    url: url::Url,
    connections: Arc<AtomicUsize>,
    task: JoinHandle<()>,
}

/// How the flood is framed.
#[derive(Clone, Copy, Debug)]
pub enum Framing {
    /// `Content-Length` announces the size up front.
    Declared,
    /// Chunked: the size shows only as the bytes arrive.
    Chunked,
}

const CHUNK: usize = 64 * 1024;

impl FloodingHandler {
    /// Answers 200 with `bytes` bytes (a JSON string that never ends, as far as any reader
    /// that stops early can tell) on 127.0.0.1.
    pub async fn start(bytes: u64, framing: Framing) -> Result<FloodingHandler> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let port = listener.local_addr()?.port();
        let connections = Arc::new(AtomicUsize::new(0));
        let counted = connections.clone();
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                counted.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(answer(stream, bytes, framing));
            }
        });
        Ok(FloodingHandler {
            url: url::Url::parse(&format!("http://127.0.0.1:{port}/api"))?,
            connections,
            task,
        })
    }

    pub fn url(&self) -> &url::Url {
        &self.url
    }

    /// Connections accepted so far.
    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }
}

impl Drop for FloodingHandler {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn answer(mut stream: tokio::net::TcpStream, bytes: u64, framing: Framing) {
    // The request's head; its body (if any) is not needed to answer.
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
    let header = match framing {
        Framing::Declared => format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {bytes}\r\nconnection: close\r\n\r\n"
        ),
        Framing::Chunked => "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n".to_owned(),
    };
    if stream.write_all(header.as_bytes()).await.is_err() {
        return;
    }
    let chunk = vec![b'a'; CHUNK];
    let mut left = bytes;
    while left > 0 {
        let n = left.min(CHUNK as u64) as usize;
        let written = match framing {
            Framing::Declared => stream.write_all(&chunk[..n]).await,
            Framing::Chunked => {
                let mut framed = format!("{n:x}\r\n").into_bytes();
                framed.extend_from_slice(&chunk[..n]);
                framed.extend_from_slice(b"\r\n");
                stream.write_all(&framed).await
            }
        };
        // The reader hung up: what a capped reader does.
        if written.is_err() {
            return;
        }
        left -= n as u64;
    }
    if matches!(framing, Framing::Chunked) {
        let _ = stream.write_all(b"0\r\n\r\n").await;
    }
}
