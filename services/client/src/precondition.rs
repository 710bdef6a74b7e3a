//! What a write requires of the resource's current state, and the entity tag it sends.

/// What a write requires of the resource's current state.
#[derive(Clone, Debug)]
pub enum Precondition {
    None,
    /// Create only: 412 when the resource exists.
    Absent,
    /// Only the version read: 412 when it changed since.
    Matches(String),
}

/// `etag` as an entity tag for `If-Match`: documents carry their `etag` bare (`8f0c…`), the
/// header quoted (`"8f0c…"`); a tag already quoted (or weak, `W/"…"`) is kept as given.
pub fn entity_tag(etag: &str) -> String {
    if etag.starts_with('"') || etag.starts_with("W/") {
        etag.to_owned()
    } else {
        format!("\"{etag}\"")
    }
}

#[cfg(test)]
mod tests {
    use super::entity_tag;

    #[test]
    fn a_documents_bare_etag_is_quoted_and_a_quoted_or_weak_one_kept() {
        for (given, sent) in [
            ("8f0c", "\"8f0c\""),
            ("\"8f0c\"", "\"8f0c\""),
            ("W/\"8f0c\"", "W/\"8f0c\""),
        ] {
            assert_eq!(entity_tag(given), sent);
        }
    }
}
