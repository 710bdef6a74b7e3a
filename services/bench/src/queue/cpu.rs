//! CPU time of another process, all its threads, from `/proc/<pid>/stat` (Linux).

use std::time::Duration;

use anyhow::{Context, Result, anyhow};

/// Clock ticks per second of `/proc`'s times (`getconf CLK_TCK`; 100 on Linux when in doubt).
pub fn clock_ticks() -> u64 {
    std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|output| String::from_utf8(output.stdout).ok())
        .and_then(|text| text.trim().parse().ok())
        .filter(|&ticks| ticks > 0)
        .unwrap_or(100)
}

/// User plus system CPU time the process has used so far.
pub fn cpu_time(pid: u32, ticks_per_second: u64) -> Result<Duration> {
    let path = format!("/proc/{pid}/stat");
    let stat = std::fs::read_to_string(&path).with_context(|| format!("cannot read {path}"))?;
    let ticks = utime_plus_stime(&stat).ok_or_else(|| anyhow!("{path}: unexpected format"))?;
    Ok(Duration::from_secs_f64(
        ticks as f64 / ticks_per_second as f64,
    ))
}

/// A child of this process whose command line holds `args` in a row (e.g. `--queuePort`,
/// `34695`): how the bench finds the Azurite it started, to read its CPU time too.
pub fn child_with_args(args: &[&str]) -> Option<u32> {
    let me = std::process::id();
    std::fs::read_dir("/proc").ok()?.find_map(|entry| {
        let pid: u32 = entry.ok()?.file_name().to_str()?.parse().ok()?;
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let after_name = &stat[stat.rfind(')')? + 1..];
        // Field 4, the parent's pid.
        let parent: u32 = after_name.split_whitespace().nth(4 - 3)?.parse().ok()?;
        if parent != me {
            return None;
        }
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
        let words: Vec<&[u8]> = cmdline.split(|&byte| byte == 0).collect();
        words
            .windows(args.len())
            .any(|window| {
                window
                    .iter()
                    .zip(args)
                    .all(|(word, arg)| *word == arg.as_bytes())
            })
            .then_some(pid)
    })
}

/// Fields 14 (utime) and 15 (stime) of proc(5)'s `stat`, counted after the command name, which
/// is in parentheses and may itself hold spaces and parentheses.
fn utime_plus_stime(stat: &str) -> Option<u64> {
    let after_name = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    // `after_name` starts at field 3 (state).
    let utime: u64 = fields.get(14 - 3)?.parse().ok()?;
    let stime: u64 = fields.get(15 - 3)?.parse().ok()?;
    Some(utime + stime)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_utime_and_stime_even_with_odd_command_names() {
        let stat = "4242 (shoal (w) x) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 75 0 0 20 0 9 0 \
                    100 2000000 3000 18446744073709551615";
        assert_eq!(utime_plus_stime(stat), Some(325));
        assert_eq!(utime_plus_stime("garbage"), None);
    }

    #[test]
    fn finds_a_child_by_its_arguments() {
        let mut child = std::process::Command::new("sleep")
            .arg("30.25")
            .spawn()
            .unwrap();
        // Until it has exec'ed, the child still shows this process's command line.
        let mut found = None;
        for _ in 0..200 {
            found = child_with_args(&["sleep", "30.25"]);
            if found.is_some() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(found, Some(child.id()));
        assert_eq!(child_with_args(&["sleep", "30.5"]), None);
    }

    #[test]
    fn own_cpu_time_is_readable() {
        let ticks = clock_ticks();
        assert!(ticks > 0);
        assert!(cpu_time(std::process::id(), ticks).is_ok());
    }
}
