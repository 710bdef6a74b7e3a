//! Entity durations as Azure writes them: .NET `TimeSpan` notation (`"00:05:00"`,
//! `"14.00:00:00"`, what the SDKs and the portal show) or ISO 8601 (`"PT5M"`, `"P14D"`, what
//! ARM templates, Bicep and the management API's XML carry).
//!
//! The management API writes `TimeSpan` values with `XmlConvert.ToString(TimeSpan)`
//! (`Azure.Messaging.ServiceBus/src/Administration/QueuePropertiesExtensions.cs`): days, hours,
//! minutes and seconds with up to seven fraction digits, e.g. the "never" value
//! `P10675199DT2H48M5.4775807S` (`TimeSpan.MaxValue`). [`parse_iso8601`] reads that subset
//! and [`to_iso8601`] writes it.

use std::borrow::Cow;
use std::fmt;
use std::time::Duration;

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};

use crate::timespan::TimeSpan;

/// `TimeSpan.MaxValue`, which Service Bus reports for a setting that is not limited
/// (`defaultMessageTimeToLive` and `autoDeleteOnIdle` of Standard and Premium entities).
pub const TIMESPAN_MAX: Duration = Duration::new(922_337_203_685, 477_580_700);

/// A duration a function declares for its entity, kept as written so a read returns it.
#[derive(Clone, Debug)]
pub struct EntityDuration {
    value: Duration,
    written: String,
}

impl EntityDuration {
    /// `TimeSpan` notation first (what Functions users copy from `host.json`), then ISO 8601.
    pub fn parse(s: &str) -> Result<EntityDuration, String> {
        let trimmed = s.trim();
        let value = if trimmed.starts_with(['P', 'p']) {
            parse_iso8601(trimmed)?
        } else {
            TimeSpan::parse(trimmed)
                .map_err(|_| {
                    "expected a duration like \"00:05:00\" ([d.]hh:mm[:ss[.fff]]) or ISO 8601 like \"PT5M\"".to_owned()
                })?
                .as_duration()
        };
        Ok(EntityDuration {
            value,
            written: trimmed.to_owned(),
        })
    }

    pub fn from_duration(value: Duration) -> EntityDuration {
        EntityDuration {
            value,
            written: TimeSpan::from(value).to_string(),
        }
    }

    pub fn as_duration(&self) -> Duration {
        self.value
    }
}

/// Equal when the durations are: `"00:05:00"` and `"PT5M"` declare the same setting.
impl PartialEq for EntityDuration {
    fn eq(&self, other: &Self) -> bool {
        self.value == other.value
    }
}

impl fmt::Display for EntityDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.written)
    }
}

impl Serialize for EntityDuration {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.written)
    }
}

impl<'de> Deserialize<'de> for EntityDuration {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct DurationVisitor;
        impl Visitor<'_> for DurationVisitor {
            type Value = EntityDuration;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a duration like \"00:05:00\" or \"PT5M\"")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<EntityDuration, E> {
                EntityDuration::parse(v).map_err(E::custom)
            }
        }
        deserializer.deserialize_str(DurationVisitor)
    }
}

impl utoipa::PartialSchema for EntityDuration {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .description(Some(
                "A duration in .NET TimeSpan notation (`[d.]hh:mm[:ss[.fffffff]]`, e.g. `14.00:00:00`) or ISO 8601 (`P14D`, `PT5M`).",
            ))
            .examples(["00:05:00", "PT5M"])
            .into()
    }
}

impl utoipa::ToSchema for EntityDuration {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("EntityDuration")
    }
}

/// Reads `P[nD][T[nH][nM][n[.f]S]]` (days, hours, minutes, seconds with up to seven fraction
/// digits), the form `XmlConvert.ToString(TimeSpan)` writes. Years and months are refused:
/// their length is not fixed, and Service Bus never writes them.
pub fn parse_iso8601(s: &str) -> Result<Duration, String> {
    const FORMAT: &str = "expected an ISO 8601 duration like \"PT5M\" or \"P14D\"";
    let rest = s
        .strip_prefix(['P', 'p'])
        .ok_or_else(|| FORMAT.to_owned())?;
    if rest.is_empty() {
        return Err(FORMAT.to_owned());
    }
    let (date, time) = match rest.find(['T', 't']) {
        Some(t) => (&rest[..t], Some(&rest[t + 1..])),
        None => (rest, None),
    };
    let mut nanos: u128 = 0;
    let mut any = false;
    let mut add = |number: &str, unit: char, in_time: bool| -> Result<(), String> {
        let scale: u128 = match (unit.to_ascii_uppercase(), in_time) {
            ('D', false) => 86_400,
            ('W', false) => 7 * 86_400,
            ('H', true) => 3_600,
            ('M', true) => 60,
            ('S', true) => 1,
            ('Y' | 'M', false) => {
                return Err("years and months have no fixed length; use days (P30D)".to_owned());
            }
            _ => return Err(FORMAT.to_owned()),
        };
        let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
        if whole.is_empty()
            || whole.len() > 15
            || !whole.bytes().all(|b| b.is_ascii_digit())
            || fraction.len() > 7
            || !fraction.bytes().all(|b| b.is_ascii_digit())
            || (!fraction.is_empty() && scale != 1)
        {
            return Err(FORMAT.to_owned());
        }
        let whole: u128 = whole.parse().map_err(|_| FORMAT.to_owned())?;
        let fraction_nanos: u128 = if fraction.is_empty() {
            0
        } else {
            let padded = format!("{fraction:0<9}");
            padded.parse().map_err(|_| FORMAT.to_owned())?
        };
        nanos += whole * scale * 1_000_000_000 + fraction_nanos;
        any = true;
        Ok(())
    };
    for (part, in_time) in [(date, false), (time.unwrap_or(""), true)] {
        let mut number = String::new();
        for c in part.chars() {
            if c.is_ascii_digit() || c == '.' {
                number.push(c);
            } else {
                add(&number, c, in_time)?;
                number.clear();
            }
        }
        if !number.is_empty() {
            return Err(FORMAT.to_owned());
        }
    }
    if !any || time == Some("") {
        return Err(FORMAT.to_owned());
    }
    let max = TIMESPAN_MAX.as_nanos();
    if nanos > max {
        return Err(
            "longer than the largest duration Service Bus accepts (TimeSpan.MaxValue)".into(),
        );
    }
    let secs = u64::try_from(nanos / 1_000_000_000).map_err(|_| FORMAT.to_owned())?;
    Ok(Duration::new(secs, (nanos % 1_000_000_000) as u32))
}

/// Writes a duration as `XmlConvert.ToString(TimeSpan)` does: `PT0S`, `PT5M`, `P14D`,
/// `P1DT2H3M4.5S`, `P10675199DT2H48M5.4775807S`.
pub fn to_iso8601(duration: Duration) -> String {
    let total = duration.as_secs();
    let (days, hours, minutes, seconds) = (
        total / 86_400,
        total / 3_600 % 24,
        total / 60 % 60,
        total % 60,
    );
    // .NET keeps 100 ns ticks.
    let ticks = duration.subsec_nanos() / 100;
    let mut out = String::from("P");
    if days > 0 {
        out.push_str(&format!("{days}D"));
    }
    if hours > 0 || minutes > 0 || seconds > 0 || ticks > 0 || days == 0 {
        out.push('T');
        if hours > 0 {
            out.push_str(&format!("{hours}H"));
        }
        if minutes > 0 {
            out.push_str(&format!("{minutes}M"));
        }
        if seconds > 0 || ticks > 0 {
            out.push_str(&seconds.to_string());
            if ticks > 0 {
                let fraction = format!("{ticks:07}");
                out.push('.');
                out.push_str(fraction.trim_end_matches('0'));
            }
            out.push('S');
        } else if hours == 0 && minutes == 0 {
            out.push_str("0S");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_both_notations() {
        let cases: &[(&str, Option<u64>)] = &[
            ("00:05:00", Some(300)),
            ("14.00:00:00", Some(14 * 86_400)),
            ("00:00:05", Some(5)),
            ("PT5M", Some(300)),
            ("P14D", Some(14 * 86_400)),
            ("P1DT2H3M4S", Some(86_400 + 7_200 + 180 + 4)),
            ("PT1H", Some(3_600)),
            ("P2W", Some(14 * 86_400)),
            ("pt30s", Some(30)),
            ("PT0S", Some(0)),
            ("P", None),
            ("PT", None),
            ("P1M", None),
            ("P1Y", None),
            ("PT5", None),
            ("PT1.5M", None),
            ("5 minutes", None),
            ("300", None),
            ("-00:05:00", None),
            ("P99999999999D", None),
        ];
        for (text, want) in cases {
            let got = EntityDuration::parse(text).ok().map(|d| d.as_duration());
            assert_eq!(got, want.map(Duration::from_secs), "{text}");
        }
    }

    #[test]
    fn iso8601_round_trips_as_dotnet_writes_it() {
        let cases: &[(Duration, &str)] = &[
            (Duration::ZERO, "PT0S"),
            (Duration::from_secs(300), "PT5M"),
            (Duration::from_secs(60), "PT1M"),
            (Duration::from_secs(14 * 86_400), "P14D"),
            (
                Duration::from_millis(86_400_000 + 7_384_500),
                "P1DT2H3M4.5S",
            ),
            (TIMESPAN_MAX, "P10675199DT2H48M5.4775807S"),
        ];
        for (duration, text) in cases {
            assert_eq!(to_iso8601(*duration), *text);
            assert_eq!(parse_iso8601(text).as_ref(), Ok(duration), "{text}");
        }
    }

    #[test]
    fn keeps_what_was_written_and_compares_by_value() {
        let a = EntityDuration::parse("PT5M").unwrap();
        let b = EntityDuration::parse("00:05:00").unwrap();
        assert_eq!(a, b);
        assert_eq!(serde_json::to_value(&a).unwrap(), "PT5M");
        assert_eq!(b.to_string(), "00:05:00");
    }
}
