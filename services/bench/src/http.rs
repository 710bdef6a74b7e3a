//! One keep-alive HTTP/1.1 connection, driven by hyper without a pool: the load generator shares
//! the machine's cores with the server and Postgres, so it does as little per request as it can.

use std::net::SocketAddr;

use anyhow::{Context, Result};
use bytes::Bytes;
use http::header::{AUTHORIZATION, CONTENT_TYPE, HOST};
use http::{HeaderName, HeaderValue, Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

pub struct Connection {
    sender: SendRequest<Full<Bytes>>,
    host: HeaderValue,
    authorization: Option<HeaderValue>,
}

impl Connection {
    pub async fn open(addr: SocketAddr, token: Option<&str>) -> Result<Connection> {
        let stream = TcpStream::connect(addr)
            .await
            .with_context(|| format!("cannot connect to {addr}"))?;
        stream.set_nodelay(true)?;
        let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .context("HTTP handshake failed")?;
        // Ends when the sender is dropped or the server closes the connection.
        tokio::spawn(connection);
        let authorization = token
            .map(|token| HeaderValue::from_str(&format!("Bearer {token}")))
            .transpose()
            .context("the token is not a valid header value")?;
        Ok(Connection {
            sender,
            host: HeaderValue::from_str(&addr.to_string())?,
            authorization,
        })
    }

    /// Sends one request and reads the whole response body.
    pub async fn send(
        &mut self,
        method: Method,
        path: &str,
        body: Option<Bytes>,
    ) -> Result<(StatusCode, Bytes)> {
        self.send_with(method, path, &[], body).await
    }

    /// [`Connection::send`] with more headers (the webhook bench's signed deliveries).
    pub async fn send_with(
        &mut self,
        method: Method,
        path: &str,
        headers: &[(HeaderName, HeaderValue)],
        body: Option<Bytes>,
    ) -> Result<(StatusCode, Bytes)> {
        self.sender.ready().await.context("connection closed")?;
        let mut request = Request::builder()
            .method(method)
            .uri(path)
            .header(HOST, self.host.clone());
        if let Some(authorization) = &self.authorization {
            request = request.header(AUTHORIZATION, authorization.clone());
        }
        if body.is_some() {
            request = request.header(CONTENT_TYPE, "application/json");
        }
        for (name, value) in headers {
            request = request.header(name, value);
        }
        let request = request.body(Full::new(body.unwrap_or_default()))?;
        let response = self.sender.send_request(request).await?;
        let status = response.status();
        let body = response.into_body().collect().await?.to_bytes();
        Ok((status, body))
    }
}
