//! Reading an answer from a tenant's destination without trusting its size: a handler or a
//! management endpoint may answer with a gigabyte, and one process serves many tenants at once,
//! so nothing beyond the cap is ever buffered (the connection is dropped instead).

/// Why a body could not be read whole.
#[derive(Debug)]
pub enum ReadError {
    /// `Content-Length`, or the bytes received, passed the cap.
    TooLarge,
    Failed(reqwest::Error),
}

/// The body, refused as soon as `Content-Length` or the bytes received pass `limit`. Chunks are
/// kept as hyper hands them over and joined once at the end, into exactly the size received: a
/// buffer grown by doubling would copy the body repeatedly and leave the allocator holding
/// freed blocks of every size up to the cap, in each thread's arena.
pub async fn read_capped(
    mut response: reqwest::Response,
    limit: usize,
) -> Result<Vec<u8>, ReadError> {
    if response
        .content_length()
        .is_some_and(|length| length > limit as u64)
    {
        return Err(ReadError::TooLarge);
    }
    let mut chunks = Vec::new();
    let mut received = 0usize;
    while let Some(chunk) = response.chunk().await.map_err(ReadError::Failed)? {
        received += chunk.len();
        if received > limit {
            return Err(ReadError::TooLarge);
        }
        chunks.push(chunk);
    }
    let mut body = Vec::with_capacity(received);
    for chunk in &chunks {
        body.extend_from_slice(chunk);
    }
    Ok(body)
}
