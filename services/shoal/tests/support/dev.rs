//! Reading what `shoal dev` prints, shared by the tests that start it.

use std::process::ChildStdout;
use std::time::Duration;

/// Everything `shoal dev` printed up to its "Stop with Ctrl-C" line (waiting up to two
/// minutes for it).
pub async fn banner(stdout: ChildStdout) -> String {
    let read = tokio::task::spawn_blocking(move || {
        use std::io::BufRead;
        let mut text = String::new();
        for line in std::io::BufReader::new(stdout).lines() {
            let line = line.unwrap();
            text.push_str(&line);
            text.push('\n');
            if line.contains("Stop with Ctrl-C") {
                break;
            }
        }
        text
    });
    tokio::time::timeout(Duration::from_secs(120), read)
        .await
        .expect("dev started")
        .unwrap()
}

/// The rest of the banner line that starts with `prefix` (e.g. `export SHOAL_TOKEN=`).
pub fn printed(banner: &str, prefix: &str) -> String {
    banner
        .lines()
        .find_map(|l| l.trim().strip_prefix(prefix))
        .unwrap_or_else(|| panic!("`{prefix}` is printed: {banner}"))
        .trim()
        .to_string()
}
