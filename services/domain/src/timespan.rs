//! Durations written the way `host.json` writes them: .NET `TimeSpan` strings.
//!
//! Users copy `host.json` snippets from Azure's documentation (`"00:00:02"`, `"1.02:03:04"`,
//! `"00:00:00.100"`), so Shoal accepts that notation and writes it back canonically. Negative
//! durations mean nothing in any setting Shoal has, so they are rejected outright.

use std::borrow::Cow;
use std::fmt;
use std::time::Duration;

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};

const NANOS_PER_TICK: u32 = 100;
/// .NET's `TimeSpan.MaxValue` is about 10,675,199 days; larger values cannot come from a real
/// `host.json` and would only invite overflow downstream.
const MAX_DAYS: u64 = 10_675_199;

/// A non-negative duration in .NET `TimeSpan` notation: `[d.]hh:mm[:ss[.fffffff]]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct TimeSpan(Duration);

impl TimeSpan {
    pub const ZERO: TimeSpan = TimeSpan(Duration::ZERO);

    /// Parses `[d.]hh:mm[:ss[.f…]]` with hours 0–23, minutes and seconds 0–59 and up to seven
    /// fraction digits (.NET's 100 ns ticks). A bare number is rejected rather than read as days
    /// the way .NET does, because `"30"` almost always means seconds to whoever wrote it.
    pub fn parse(s: &str) -> Result<Self, String> {
        const FORMAT: &str = "expected a duration like \"00:01:00\" ([d.]hh:mm[:ss[.fff]])";
        let s = s.trim();
        if s.starts_with('-') {
            return Err("must not be negative".to_owned());
        }
        // A dot before the first colon separates days; a dot after it starts the fraction.
        let (days, rest) = match s.find('.') {
            Some(dot) if !s[..dot].contains(':') => (Some(&s[..dot]), &s[dot + 1..]),
            _ => (None, s),
        };
        let (clock, fraction) = split_fraction(rest);
        build(days, clock, fraction).unwrap_or_else(|| Err(FORMAT.to_owned()))
    }

    pub fn as_duration(&self) -> Duration {
        self.0
    }

    pub const fn from_millis(millis: u64) -> Self {
        TimeSpan(Duration::from_millis(millis))
    }

    pub const fn from_secs(secs: u64) -> Self {
        TimeSpan(Duration::from_secs(secs))
    }
}

impl From<Duration> for TimeSpan {
    fn from(duration: Duration) -> Self {
        TimeSpan(duration)
    }
}

fn split_fraction(s: &str) -> (&str, Option<&str>) {
    match s.split_once('.') {
        Some((clock, fraction)) => (clock, Some(fraction)),
        None => (s, None),
    }
}

/// Assembles the parts; `None` means the text is not a TimeSpan at all, `Some(Err)` that it is
/// one but out of range.
fn build(
    days: Option<&str>,
    clock: &str,
    fraction: Option<&str>,
) -> Option<Result<TimeSpan, String>> {
    let days = match days {
        Some(d) => digits(d, 8)?,
        None => 0,
    };
    let parts: Vec<&str> = clock.split(':').collect();
    let (hours, minutes, seconds) = match parts.as_slice() {
        [h, m] if fraction.is_none() => (digits(h, 2)?, digits(m, 2)?, 0),
        [h, m, s] => (digits(h, 2)?, digits(m, 2)?, digits(s, 2)?),
        _ => return None,
    };
    let nanos = match fraction {
        Some(f) if !f.is_empty() && f.len() <= 7 => {
            let ticks = digits(f, 7)?;
            let scale = 10u64.pow(7 - u32::try_from(f.len()).ok()?);
            u32::try_from(ticks * scale).ok()? * NANOS_PER_TICK
        }
        Some(_) => return None,
        None => 0,
    };
    if hours > 23 || minutes > 59 || seconds > 59 {
        return Some(Err(
            "hours must be 0-23 and minutes and seconds 0-59 (write days as \"d.hh:mm:ss\")"
                .to_owned(),
        ));
    }
    if days > MAX_DAYS {
        return Some(Err("is too large".to_owned()));
    }
    let secs = days * 86_400 + hours * 3_600 + minutes * 60 + seconds;
    Some(Ok(TimeSpan(Duration::new(secs, nanos))))
}

/// 1..=`max_len` ASCII digits, or `None`.
fn digits(s: &str, max_len: usize) -> Option<u64> {
    if s.is_empty() || s.len() > max_len || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Canonical form: `hh:mm:ss`, `d.hh:mm:ss` from one day on, and a fraction only when non-zero
/// (three digits for whole milliseconds, seven otherwise so nothing is lost).
impl fmt::Display for TimeSpan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let total = self.0.as_secs();
        let (days, rest) = (total / 86_400, total % 86_400);
        let (hours, minutes, seconds) = (rest / 3_600, rest % 3_600 / 60, rest % 60);
        if days > 0 {
            write!(f, "{days}.")?;
        }
        write!(f, "{hours:02}:{minutes:02}:{seconds:02}")?;
        let nanos = self.0.subsec_nanos();
        if nanos.is_multiple_of(1_000_000) {
            if nanos > 0 {
                write!(f, ".{:03}", nanos / 1_000_000)?;
            }
        } else {
            write!(f, ".{:07}", nanos / NANOS_PER_TICK)?;
        }
        Ok(())
    }
}

impl std::str::FromStr for TimeSpan {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        TimeSpan::parse(s)
    }
}

impl Serialize for TimeSpan {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for TimeSpan {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TimeSpanVisitor;
        impl Visitor<'_> for TimeSpanVisitor {
            type Value = TimeSpan;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a duration string like \"00:01:00\"")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<TimeSpan, E> {
                TimeSpan::parse(v).map_err(E::custom)
            }
        }
        deserializer.deserialize_str(TimeSpanVisitor)
    }
}

impl utoipa::PartialSchema for TimeSpan {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .description(Some(
                "Duration in .NET TimeSpan notation `[d.]hh:mm:ss[.fff]`, as in host.json.",
            ))
            .pattern(Some(
                "^([0-9]+\\.)?[0-9]{1,2}:[0-9]{1,2}(:[0-9]{1,2}(\\.[0-9]{1,7})?)?$",
            ))
            .examples(["00:01:00"])
            .into()
    }
}

impl utoipa::ToSchema for TimeSpan {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("TimeSpan")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_host_json_notation() {
        let cases = [
            ("00:00:02", Duration::from_secs(2)),
            ("00:01:00", Duration::from_secs(60)),
            (
                "1.02:03:04",
                Duration::from_secs(86_400 + 2 * 3_600 + 3 * 60 + 4),
            ),
            ("00:00:00.100", Duration::from_millis(100)),
            ("00:00:00.80", Duration::from_millis(800)),
            ("00:00:00.0000001", Duration::from_nanos(100)),
            ("01:30", Duration::from_secs(5_400)),
            ("0:5:7", Duration::from_secs(307)),
            (" 00:00:05 ", Duration::from_secs(5)),
            ("23:59:59", Duration::from_secs(86_399)),
            ("10.00:00:00.5", Duration::from_millis(864_000_500)),
        ];
        for (text, want) in cases {
            assert_eq!(
                TimeSpan::parse(text).map(|t| t.as_duration()),
                Ok(want),
                "{text}"
            );
        }
    }

    #[test]
    fn rejects_negative_and_garbage() {
        let cases = [
            ("-00:00:01", "must not be negative"),
            ("", "expected a duration"),
            ("30", "expected a duration"),
            ("abc", "expected a duration"),
            ("00:00:00.", "expected a duration"),
            ("00:00:00.12345678", "expected a duration"),
            ("1.", "expected a duration"),
            ("00:60:00", "minutes and seconds 0-59"),
            ("24:00:00", "hours must be 0-23"),
            ("00:00:60", "minutes and seconds 0-59"),
            ("1:2:3:4", "expected a duration"),
            ("+00:00:01", "expected a duration"),
            ("99999999.00:00:00", "is too large"),
            ("00:01.5", "expected a duration"),
        ];
        for (text, want) in cases {
            let err = TimeSpan::parse(text).unwrap_err();
            assert!(err.contains(want), "{text:?}: {err}");
        }
    }

    #[test]
    fn displays_canonically() {
        let cases = [
            (TimeSpan::from_secs(2), "00:00:02"),
            (TimeSpan::from_secs(60), "00:01:00"),
            (TimeSpan::from_millis(100), "00:00:00.100"),
            (TimeSpan::from_secs(86_400 + 7_384), "1.02:03:04"),
            (
                TimeSpan::from(Duration::from_nanos(100)),
                "00:00:00.0000001",
            ),
            (TimeSpan::ZERO, "00:00:00"),
        ];
        for (span, want) in cases {
            assert_eq!(span.to_string(), want);
        }
    }

    #[test]
    fn serde_roundtrips_as_canonical_string() {
        let span: TimeSpan = serde_json::from_str("\"0:1:0\"").unwrap();
        assert_eq!(serde_json::to_string(&span).unwrap(), "\"00:01:00\"");
        assert!(serde_json::from_str::<TimeSpan>("60").is_err());
    }

    #[test]
    fn display_then_parse_is_identity() {
        for nanos in [
            0u64,
            100,
            1_000_000,
            999_999_900,
            86_400_000_000_000,
            123_456_789_000_000,
        ] {
            let span = TimeSpan::from(Duration::from_nanos(nanos));
            assert_eq!(TimeSpan::parse(&span.to_string()), Ok(span), "{span}");
        }
    }
}
