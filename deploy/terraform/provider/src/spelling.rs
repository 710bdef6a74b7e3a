//! Values the API writes back in a canonical spelling: a .NET `TimeSpan` (`"00:01"` reads back
//! as `"00:01:00"`) and a URL (`"https://ops.example"` reads back with its trailing `/`).
//!
//! Terraform refuses an apply whose result differs from the plan in any character, and plans a
//! change whenever the configuration's text differs from the state's. So the provider keeps
//! the user's spelling while it means the same value as the server's, and takes the server's
//! when it means something else (a change made outside Terraform, shown as drift).

use tf_provider::value::Value;

/// `[d.]hh:mm[:ss[.fffffff]]` as 100 ns ticks, the way Shoal reads a `TimeSpan`; `None` for
/// any other text (the API, not the provider, says what is wrong with it).
pub fn timespan_ticks(text: &str) -> Option<u128> {
    let text = text.trim();
    let (days, rest) = match text.find('.') {
        Some(dot) if !text[..dot].contains(':') => (number(&text[..dot], 8)?, &text[dot + 1..]),
        _ => (0, text),
    };
    let (clock, fraction) = match rest.split_once('.') {
        Some((clock, fraction)) => (clock, Some(fraction)),
        None => (rest, None),
    };
    let parts: Vec<&str> = clock.split(':').collect();
    let (hours, minutes, seconds) = match parts.as_slice() {
        [h, m] => (number(h, 2)?, number(m, 2)?, 0),
        [h, m, s] => (number(h, 2)?, number(m, 2)?, number(s, 2)?),
        _ => return None,
    };
    if hours > 23 || minutes > 59 || seconds > 59 {
        return None;
    }
    let ticks = match fraction {
        None => 0,
        Some(f) if !f.is_empty() && f.len() <= 7 => number(f, 7)? * 10u128.pow(7 - f.len() as u32),
        Some(_) => return None,
    };
    let seconds = ((days * 24 + hours) * 60 + minutes) * 60 + seconds;
    Some(seconds * 10_000_000 + ticks)
}

fn number(digits: &str, max_len: usize) -> Option<u128> {
    if digits.is_empty() || digits.len() > max_len || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

fn same_timespan(a: &str, b: &str) -> bool {
    a == b || matches!((timespan_ticks(a), timespan_ticks(b)), (Some(x), Some(y)) if x == y)
}

fn same_url(a: &str, b: &str) -> bool {
    a == b || matches!((url::Url::parse(a), url::Url::parse(b)), (Ok(x), Ok(y)) if x == y)
}

fn keep(
    mine: &Value<String>,
    theirs: Value<String>,
    same: fn(&str, &str) -> bool,
) -> Value<String> {
    match (mine, &theirs) {
        (Value::Value(m), Value::Value(t)) if same(m, t) => mine.clone(),
        _ => theirs,
    }
}

/// `theirs`, unless `mine` spells the same duration.
pub fn keep_timespan(mine: &Value<String>, theirs: Value<String>) -> Value<String> {
    keep(mine, theirs, same_timespan)
}

/// `theirs`, unless `mine` spells the same URL.
pub fn keep_url(mine: &Value<String>, theirs: Value<String>) -> Value<String> {
    keep(mine, theirs, same_url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timespans_read_as_shoal_reads_them() {
        let second = 10_000_000;
        let cases: [(&str, Option<u128>); 12] = [
            ("00:00:30", Some(30 * second)),
            ("00:01", Some(60 * second)),
            ("01:00:00", Some(3600 * second)),
            ("1.00:00:00", Some(86_400 * second)),
            ("7.00:00:00", Some(7 * 86_400 * second)),
            ("00:00:00.5", Some(second / 2)),
            ("00:00:00.100", Some(second / 10)),
            ("00:00:00.0000001", Some(1)),
            ("30", None),
            ("24:00:00", None),
            ("00:60", None),
            ("-00:00:01", None),
        ];
        for (text, expected) in cases {
            assert_eq!(timespan_ticks(text), expected, "{text}");
        }
    }

    #[test]
    fn the_users_spelling_stays_while_it_means_the_servers_value() {
        let v = |s: &str| Value::Value(s.to_owned());
        let cases = [
            (v("00:01"), v("00:01:00"), v("00:01")),
            (v("0.00:00:30"), v("00:00:30"), v("0.00:00:30")),
            (v("00:00:30"), v("00:00:45"), v("00:00:45")),
            (Value::Null, v("00:00:30"), v("00:00:30")),
            (Value::Unknown, v("00:00:30"), v("00:00:30")),
            (v("00:00:30"), Value::Null, Value::Null),
        ];
        for (mine, theirs, expected) in cases {
            assert_eq!(
                keep_timespan(&mine, theirs.clone()),
                expected,
                "{mine:?} {theirs:?}"
            );
        }
        let cases = [
            (
                v("https://ops.example"),
                v("https://ops.example/"),
                v("https://ops.example"),
            ),
            (
                v("HTTPS://Ops.Example/h"),
                v("https://ops.example/h"),
                v("HTTPS://Ops.Example/h"),
            ),
            (
                v("https://ops.example/a"),
                v("https://ops.example/b"),
                v("https://ops.example/b"),
            ),
        ];
        for (mine, theirs, expected) in cases {
            assert_eq!(
                keep_url(&mine, theirs.clone()),
                expected,
                "{mine:?} {theirs:?}"
            );
        }
    }
}
