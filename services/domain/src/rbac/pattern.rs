//! Operation-string matching as Azure RBAC does it for `actions` and `dataActions`.
//!
//! Azure compares operations case-insensitively, and its `*` is a plain wildcard over the whole
//! string, slashes included: `*/read` matches `Shoal/apps/functions/read`, and
//! `Shoal/apps/*` matches every operation on apps and on what lies beneath them. There are no
//! other special characters.

/// Whether the operation `operation` is named by `pattern`: case-insensitive, `*` matches any
/// run of characters (including `/` and none at all), e.g. `*`, `*/read`, `Shoal/apps/*`.
///
/// Runs in O(pattern × operation) at worst, with no recursion, so a pattern with many stars
/// from a custom role cannot make a check slow.
pub fn matches(pattern: &str, operation: &str) -> bool {
    // Comparing bytes is exact for UTF-8: `*` is ASCII, and a literal in the pattern starts on
    // a character boundary, which can only equal a byte that starts a character too.
    let pattern = pattern.as_bytes();
    let operation = operation.as_bytes();
    let (mut p, mut o) = (0, 0);
    // The last `*` seen and the operation position it is currently taken to end at; on a
    // mismatch it swallows one more byte instead of backtracking over every earlier star.
    let mut star: Option<(usize, usize)> = None;
    while o < operation.len() {
        match pattern.get(p) {
            Some(b'*') => {
                star = Some((p, o));
                p += 1;
            }
            Some(c) if c.eq_ignore_ascii_case(&operation[o]) => {
                p += 1;
                o += 1;
            }
            _ => match star {
                Some((star_p, star_o)) => {
                    p = star_p + 1;
                    o = star_o + 1;
                    star = Some((star_p, star_o + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == b'*')
}
