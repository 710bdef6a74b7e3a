//! Keyset pagination: lists are ordered by name and a continuation token is the opaque
//! (base64url) last name of the previous page, so pages stay stable under concurrent writes.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// At most this many items a page; larger requests are a 422, not silently clamped.
pub const MAX_LIMIT: u32 = 1000;
pub const DEFAULT_LIMIT: u32 = 100;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageRequest {
    pub limit: u32,
    /// Items strictly after this name.
    pub after: Option<String>,
}

#[derive(Debug, Clone)]
pub struct Page<T> {
    pub items: Vec<T>,
    pub continuation_token: Option<String>,
}

pub fn encode_token(last_name: &str) -> String {
    URL_SAFE_NO_PAD.encode(last_name.as_bytes())
}

/// Decodes a continuation token; None when it is not one we issued.
pub fn decode_token(token: &str) -> Option<String> {
    let bytes = URL_SAFE_NO_PAD.decode(token).ok()?;
    let name = String::from_utf8(bytes).ok()?;
    // Every listed resource's name is made of these; anything else was not issued by us.
    let plausible = name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    (plausible && !name.is_empty() && name.len() <= 256).then_some(name)
}

impl<T> Page<T> {
    /// Builds a page from `limit + 1` fetched rows: the extra row only says there is more.
    pub fn from_rows(mut rows: Vec<T>, limit: u32, name_of: impl Fn(&T) -> &str) -> Page<T> {
        let more = rows.len() > limit as usize;
        rows.truncate(limit as usize);
        let continuation_token = if more {
            rows.last().map(|r| encode_token(name_of(r)))
        } else {
            None
        };
        Page {
            items: rows,
            continuation_token,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_round_trips() {
        assert_eq!(
            decode_token(&encode_token("app-7")).as_deref(),
            Some("app-7")
        );
    }

    #[test]
    fn foreign_tokens_are_rejected() {
        assert_eq!(decode_token("!!!"), None);
        assert_eq!(decode_token(""), None);
        assert_eq!(decode_token("AAAA"), None, "NUL bytes");
    }

    #[test]
    fn extra_row_yields_a_token_and_is_dropped() {
        let page = Page::from_rows(vec!["a".to_string(), "b".into(), "c".into()], 2, |s| s);
        assert_eq!(page.items, vec!["a", "b"]);
        assert_eq!(
            page.continuation_token
                .as_deref()
                .and_then(decode_token)
                .as_deref(),
            Some("b")
        );
        let last = Page::from_rows(vec!["a".to_string()], 2, |s| s);
        assert!(last.continuation_token.is_none());
    }
}
