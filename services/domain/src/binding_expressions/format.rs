//! The `:format` of an expression, as .NET formats the value
//! (`BindingDataPathHelper.ConvertParameterValueToString` in azure-webjobs-sdk): a date-time by
//! a custom format string (default `yyyy-MM-ddTHH-mm-ssK`, so `{DateTime}` is
//! `2024-05-01T09-30-00Z`), a GUID by `N`, `D`, `B` or `P` (default `D`). Shoal knows the custom
//! date-time specifiers (other characters are copied, as .NET copies them) and the standard
//! `o`, `s` and `u` forms; any other standard format, and a GUID format other than those four,
//! is refused on write with the reason rather than formatted differently from Azure.

use chrono::{DateTime, Datelike, Timelike, Utc};
use uuid::Uuid;

/// What a formatted value is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueKind {
    DateTime,
    Guid,
}

/// Azure's default for a date-time without a format (ISO 8601 with `-` for `:`).
pub const DEFAULT_DATE_TIME: &str = "yyyy-MM-ddTHH-mm-ssK";

/// Whether `format` can format a value of `kind`; the error says why not.
pub fn check(kind: ValueKind, format: &str) -> Result<(), String> {
    match kind {
        ValueKind::DateTime => date_time(DateTime::<Utc>::UNIX_EPOCH, format).map(|_| ()),
        ValueKind::Guid => guid(Uuid::nil(), Some(format)).map(|_| ()),
    }
}

/// A GUID in .NET's `N`, `D`, `B` or `P` form (lower-case hex, as .NET writes it).
pub fn guid(value: Uuid, format: Option<&str>) -> Result<String, String> {
    let hyphenated = value.hyphenated().to_string();
    match format.unwrap_or("D") {
        "D" | "d" => Ok(hyphenated),
        "N" | "n" => Ok(value.simple().to_string()),
        "B" | "b" => Ok(format!("{{{hyphenated}}}")),
        "P" | "p" => Ok(format!("({hyphenated})")),
        other => Err(format!(
            "GUID format {other:?} is not supported; use N, D, B or P"
        )),
    }
}

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const DAYS: [&str; 7] = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];

/// A UTC date-time by a .NET format string under the invariant culture.
pub fn date_time(t: DateTime<Utc>, format: &str) -> Result<String, String> {
    let format = match format {
        "o" | "O" => "yyyy-MM-ddTHH:mm:ss.fffffffK",
        "s" => "yyyy-MM-ddTHH:mm:ss",
        "u" => "yyyy-MM-dd HH:mm:ssZ",
        one if one.chars().count() == 1 && one.chars().all(|c| c.is_ascii_alphabetic()) => {
            return Err(format!(
                "date-time format {one:?} (a .NET standard format) is not supported; use o, s, u or a custom format such as yyyy-MM-dd"
            ));
        }
        custom => custom,
    };
    let chars: Vec<char> = format.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let run = chars[i..].iter().take_while(|&&x| x == c).count();
        let pad = |n: u32, width: usize| format!("{n:0width$}");
        match c {
            'y' => {
                let year = t.year();
                out.push_str(&match run {
                    1 => (year % 100).to_string(),
                    2 => pad((year % 100) as u32, 2),
                    n => format!("{year:0n$}"),
                });
            }
            'M' => match run {
                1 => out.push_str(&t.month().to_string()),
                2 => out.push_str(&pad(t.month(), 2)),
                3 => out.push_str(&MONTHS[t.month0() as usize][..3]),
                _ => out.push_str(MONTHS[t.month0() as usize]),
            },
            'd' => match run {
                1 => out.push_str(&t.day().to_string()),
                2 => out.push_str(&pad(t.day(), 2)),
                3 => out.push_str(&DAYS[t.weekday().num_days_from_monday() as usize][..3]),
                _ => out.push_str(DAYS[t.weekday().num_days_from_monday() as usize]),
            },
            'H' => out.push_str(&if run == 1 {
                t.hour().to_string()
            } else {
                pad(t.hour(), 2)
            }),
            'h' => {
                let h = match t.hour() % 12 {
                    0 => 12,
                    h => h,
                };
                out.push_str(&if run == 1 { h.to_string() } else { pad(h, 2) });
            }
            'm' => out.push_str(&if run == 1 {
                t.minute().to_string()
            } else {
                pad(t.minute(), 2)
            }),
            's' => out.push_str(&if run == 1 {
                t.second().to_string()
            } else {
                pad(t.second(), 2)
            }),
            'f' | 'F' => {
                if run > 7 {
                    return Err(format!("{run} '{c}'s: at most 7 fractional digits"));
                }
                let ticks = format!("{:07}", t.nanosecond().min(999_999_999) / 100);
                let digits = &ticks[..run];
                if c == 'F' {
                    out.push_str(digits.trim_end_matches('0'));
                } else {
                    out.push_str(digits);
                }
            }
            't' => out.push_str(if t.hour() < 12 {
                &"AM"[..run.min(2)]
            } else {
                &"PM"[..run.min(2)]
            }),
            'K' => out.push_str(&"Z".repeat(run)),
            'z' => out.push_str(match run {
                1 | 2 => "+00",
                _ => "+00:00",
            }),
            '\'' | '"' => {
                let Some(len) = chars[i + 1..].iter().position(|&x| x == c) else {
                    return Err(format!("the quote {c} in the format has no closing {c}"));
                };
                out.extend(&chars[i + 1..i + 1 + len]);
                i += len + 2;
                continue;
            }
            '\\' => {
                let Some(next) = chars.get(i + 1) else {
                    return Err("the format ends in '\\'".into());
                };
                out.push(*next);
                i += 2;
                continue;
            }
            '%' => {
                // `%d` is the one-letter custom specifier; the `%` itself writes nothing.
                i += 1;
                continue;
            }
            'g' => out.push_str("A.D."),
            // Any other character, letters included (`T`, `Z`), is copied as .NET copies it.
            other => {
                out.push(other);
                i += 1;
                continue;
            }
        }
        i += run;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at() -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2024-03-05T07:08:09.1234567Z")
            .unwrap()
            .with_timezone(&Utc)
    }

    #[test]
    fn date_times_format_as_dotnet_does() {
        let cases = [
            (DEFAULT_DATE_TIME, "2024-03-05T07-08-09Z"),
            ("yyyy-MM-dd", "2024-03-05"),
            ("yyyyMMddHHmmss", "20240305070809"),
            ("yy-M-d-H-h-m-s", "24-3-5-7-7-8-9"),
            ("MMM ddd", "Mar Tue"),
            ("MMMM dddd", "March Tuesday"),
            ("fff", "123"),
            ("fffffff", "1234567"),
            ("'at' HH\\h", "at 07h"),
            ("tt", "AM"),
            ("zzz", "+00:00"),
            ("o", "2024-03-05T07:08:09.1234567Z"),
            ("s", "2024-03-05T07:08:09"),
            ("u", "2024-03-05 07:08:09Z"),
            ("%d", "5"),
            ("yyyyMMddTHHmmZ", "20240305T0708Z"),
        ];
        for (format, want) in cases {
            assert_eq!(date_time(at(), format).as_deref(), Ok(want), "{format}");
        }
    }

    #[test]
    fn unknown_date_time_formats_are_refused_with_the_reason() {
        for (format, reason) in [
            ("d", "standard format"),
            ("'open", "no closing"),
            ("ffffffff", "at most 7"),
        ] {
            let err = check(ValueKind::DateTime, format).unwrap_err();
            assert!(err.contains(reason), "{format}: {err}");
        }
    }

    #[test]
    fn guids_format_as_dotnet_does() {
        let g = Uuid::parse_str("0f8fad5b-d9cb-469f-a165-70867728950e").unwrap();
        assert_eq!(
            guid(g, None).unwrap(),
            "0f8fad5b-d9cb-469f-a165-70867728950e"
        );
        assert_eq!(
            guid(g, Some("N")).unwrap(),
            "0f8fad5bd9cb469fa16570867728950e"
        );
        assert_eq!(
            guid(g, Some("B")).unwrap(),
            "{0f8fad5b-d9cb-469f-a165-70867728950e}"
        );
        assert_eq!(
            guid(g, Some("P")).unwrap(),
            "(0f8fad5b-d9cb-469f-a165-70867728950e)"
        );
        assert!(guid(g, Some("X")).unwrap_err().contains("use N, D, B or P"));
    }
}
