//! Reading a handler's answer without trusting its size: a tenant's handler may answer with a
//! gigabyte, and a worker runs many deliveries at once for many tenants, so nothing beyond the
//! cap is ever buffered (the connection is dropped instead).

/// What a handler's answer may weigh unless the process is told otherwise
/// (`--max-response-bytes`).
pub const DEFAULT_MAX_RESPONSE_BYTES: usize = 16 * 1024 * 1024;

/// Why a body could not be read whole.
pub(crate) enum ReadError {
    TooLarge,
    Failed(reqwest::Error),
}

/// The body, refused as soon as `Content-Length` or the bytes received pass `limit`.
pub(crate) async fn read_capped(
    mut response: reqwest::Response,
    limit: usize,
) -> Result<Vec<u8>, ReadError> {
    if response
        .content_length()
        .is_some_and(|length| length > limit as u64)
    {
        return Err(ReadError::TooLarge);
    }
    let mut body = Vec::with_capacity(
        response
            .content_length()
            .map_or(8 * 1024, |length| length as usize)
            .min(limit),
    );
    while let Some(chunk) = response.chunk().await.map_err(ReadError::Failed)? {
        if body.len() + chunk.len() > limit {
            return Err(ReadError::TooLarge);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}
