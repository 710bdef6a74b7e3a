//! ISO 8601 durations (`PT1M`, `P14D`, `P10675199DT2H48M5.4775807S`) as the Service Bus
//! emulator's `Config.json` and the ATOM API write them.

use std::time::Duration;

/// .NET's `TimeSpan.MaxValue` in ISO 8601, what Service Bus writes for "never".
pub const MAX_ISO: &str = "P10675199DT2H48M5.4775807S";

/// Durations at or beyond this are "never" (`TimeSpan.MaxValue` is 10,675,199 days).
const NEVER_SECS: u64 = 10_675_199 * 86_400;

/// Parses `P[nD][T[nH][nM][n[.f]S]]` (weeks `nW` too). `Ok(None)` is "never" (≥ `TimeSpan.MaxValue`).
pub fn parse(text: &str) -> Result<Option<Duration>, String> {
    let err = || format!("expected an ISO 8601 duration like \"PT1M\" or \"P14D\", got {text:?}");
    let rest = text.trim().strip_prefix('P').ok_or_else(err)?;
    if rest.is_empty() {
        return Err(err());
    }
    let (date, time) = match rest.split_once('T') {
        Some((date, time)) if !time.is_empty() => (date, Some(time)),
        Some(_) => return Err(err()),
        None => (rest, None),
    };
    let mut nanos: u128 = 0;
    let mut add = |part: &str, units: &[(char, u128)]| -> Result<(), String> {
        let mut number = String::new();
        for c in part.chars() {
            if c.is_ascii_digit() || c == '.' {
                number.push(c);
                continue;
            }
            let unit = units.iter().find(|(u, _)| *u == c).ok_or_else(err)?.1;
            if number.is_empty() {
                return Err(err());
            }
            let (whole, fraction) = number.split_once('.').unwrap_or((&number, ""));
            let whole: u128 = whole.parse().map_err(|_| err())?;
            let mut frac_nanos = 0u128;
            if !fraction.is_empty() {
                // Only seconds may carry a fraction (as .NET writes them).
                if c != 'S' || fraction.len() > 9 || !fraction.chars().all(|d| d.is_ascii_digit()) {
                    return Err(err());
                }
                let padded = format!("{fraction:0<9}");
                frac_nanos = padded.parse().map_err(|_| err())?;
            }
            nanos = nanos
                .saturating_add(whole.saturating_mul(unit))
                .saturating_add(frac_nanos);
            number.clear();
        }
        if number.is_empty() {
            Ok(())
        } else {
            Err(err())
        }
    };
    const SEC: u128 = 1_000_000_000;
    add(date, &[('W', 7 * 86_400 * SEC), ('D', 86_400 * SEC)])?;
    if let Some(time) = time {
        add(time, &[('H', 3_600 * SEC), ('M', 60 * SEC), ('S', SEC)])?;
    }
    if nanos / SEC >= u128::from(NEVER_SECS) {
        return Ok(None);
    }
    let secs = u64::try_from(nanos / SEC).map_err(|_| err())?;
    Ok(Some(Duration::new(secs, (nanos % SEC) as u32)))
}

/// Writes a duration the way Service Bus does (`PT1M`, `P14D`, `PT0.5S`); `None` is
/// [`MAX_ISO`].
pub fn format(duration: Option<Duration>) -> String {
    let Some(duration) = duration else {
        return MAX_ISO.to_owned();
    };
    let total = duration.as_secs();
    let (days, hours, minutes, seconds) = (
        total / 86_400,
        total % 86_400 / 3_600,
        total % 3_600 / 60,
        total % 60,
    );
    let mut out = String::from("P");
    if days > 0 {
        out.push_str(&format!("{days}D"));
    }
    let nanos = duration.subsec_nanos();
    if hours > 0 || minutes > 0 || seconds > 0 || nanos > 0 || days == 0 {
        out.push('T');
        if hours > 0 {
            out.push_str(&format!("{hours}H"));
        }
        if minutes > 0 {
            out.push_str(&format!("{minutes}M"));
        }
        if seconds > 0 || nanos > 0 || (hours == 0 && minutes == 0) {
            if nanos > 0 {
                let fraction = format!("{nanos:09}");
                out.push_str(&format!("{seconds}.{}S", fraction.trim_end_matches('0')));
            } else {
                out.push_str(&format!("{seconds}S"));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_service_bus_durations() {
        let cases: &[(&str, Result<Option<Duration>, ()>)] = &[
            ("PT1M", Ok(Some(Duration::from_secs(60)))),
            ("PT1H", Ok(Some(Duration::from_secs(3600)))),
            ("P14D", Ok(Some(Duration::from_secs(14 * 86_400)))),
            ("P1DT2H3M4S", Ok(Some(Duration::from_secs(86_400 + 7_384)))),
            ("PT0.5S", Ok(Some(Duration::from_millis(500)))),
            ("P1W", Ok(Some(Duration::from_secs(7 * 86_400)))),
            (MAX_ISO, Ok(None)),
            ("", Err(())),
            ("P", Err(())),
            ("PT", Err(())),
            ("1M", Err(())),
            ("PT1X", Err(())),
            ("PTM", Err(())),
            ("P1.5D", Err(())),
            ("00:01:00", Err(())),
        ];
        for (text, expected) in cases {
            assert_eq!(parse(text).map_err(|_| ()), *expected, "{text}");
        }
    }

    #[test]
    fn formats_round_trip() {
        for secs in [0u64, 1, 59, 60, 61, 3_600, 86_400, 14 * 86_400, 90_061] {
            let d = Some(Duration::from_secs(secs));
            assert_eq!(parse(&format(d)), Ok(d), "{}", format(d));
        }
        assert_eq!(format(Some(Duration::from_secs(60))), "PT1M");
        assert_eq!(format(Some(Duration::from_millis(1500))), "PT1.5S");
        assert_eq!(format(None), MAX_ISO);
    }
}
