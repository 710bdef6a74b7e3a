//! What a process calls itself where nobody named it: the scheduler's lease holder, and the
//! API process whose webhook calls the invocation log shows.

/// `<host>-<pid>` (`<fallback>-<pid>` where the host has no name): unique enough among
/// processes without configuration, and only of the characters worker names allow.
pub fn host_and_pid(fallback: &str) -> String {
    let host = std::fs::read_to_string("/etc/hostname")
        .ok()
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| fallback.to_owned());
    let host: String = host
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        .collect();
    format!("{host}-{}", std::process::id())
}
