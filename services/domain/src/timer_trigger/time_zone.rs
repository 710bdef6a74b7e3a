//! The time zone an app's cron schedules are read in.
//!
//! Azure Functions reads schedules in the host's local time zone: UTC unless the app sets
//! `WEBSITE_TIME_ZONE` (Windows, and Linux dedicated plans) or `TZ` (Linux); the Linux
//! Consumption plan refuses both (azure-functions-host,
//! `src/WebJobs.Script/Environment/EnvironmentSettingNames.cs`, `FunctionsWebsiteTimeZone` and
//! `FunctionsTimeZone`; `src/WebJobs.Script.WebHost/WebJobsScriptHostService.cs`,
//! `ValidateLinuxSKUConfiguration`). Shoal reads either app setting, and refuses the two set to
//! different zones rather than pick one silently.
//!
//! Shoal takes IANA names (`America/New_York`, any case), as `TZ` on Linux does. A Windows ID
//! (`Eastern Standard Time`, which Windows hosts take in `WEBSITE_TIME_ZONE`) is refused with
//! the IANA name to write instead, for the common ones. Shoal does not map them silently: one
//! Windows ID stands for several IANA zones whose past rules differ (`Eastern Standard Time`
//! covers New York, Toronto and Nassau), and which of them is meant is the tenant's call, made
//! once and visible in the setting.

use std::collections::BTreeMap;

use chrono_tz::{TZ_VARIANTS, Tz};

/// The app setting Azure Functions reads the time zone from on Windows.
pub const WEBSITE_TIME_ZONE: &str = "WEBSITE_TIME_ZONE";
/// The app setting (an environment variable) Linux hosts read it from.
pub const TZ: &str = "TZ";

/// The app's time zone: `WEBSITE_TIME_ZONE` or `TZ`, UTC when neither is set. Errors name the
/// setting and say what to write instead.
pub fn time_zone(settings: &BTreeMap<String, String>) -> Result<Tz, String> {
    let read = |setting: &str| -> Option<Result<Tz, String>> {
        let value = setting_value(settings, setting)?;
        Some(parse_time_zone(value).map_err(|why| format!("app setting {setting}: {why}")))
    };
    match (read(WEBSITE_TIME_ZONE), read(TZ)) {
        (None, None) => Ok(Tz::UTC),
        (Some(zone), None) | (None, Some(zone)) => zone,
        (Some(website), Some(tz)) => {
            let (website, tz) = (website?, tz?);
            if website == tz {
                Ok(website)
            } else {
                Err(format!(
                    "app settings {WEBSITE_TIME_ZONE} ({}) and {TZ} ({}) name different time zones; set one of them",
                    website.name(),
                    tz.name()
                ))
            }
        }
    }
}

/// An IANA time zone name, matched in any case; a leading `:` (POSIX `TZ` syntax) is allowed.
pub fn parse_time_zone(name: &str) -> Result<Tz, String> {
    let name = name.trim();
    let name = name.strip_prefix(':').unwrap_or(name);
    if let Ok(zone) = name.parse::<Tz>() {
        return Ok(zone);
    }
    if let Some(zone) = TZ_VARIANTS
        .iter()
        .find(|zone| zone.name().eq_ignore_ascii_case(name))
    {
        return Ok(*zone);
    }
    if let Some((_, iana)) = WINDOWS_IDS
        .iter()
        .find(|(windows, _)| windows.eq_ignore_ascii_case(name))
    {
        return Err(format!(
            "\"{name}\" is a Windows time zone ID; Shoal takes IANA names, as Azure Functions on Linux does: write \"{iana}\""
        ));
    }
    if name.contains(' ') {
        return Err(format!(
            "\"{name}\" looks like a Windows time zone ID; Shoal takes IANA names such as \"Europe/London\" or \"America/New_York\""
        ));
    }
    Err(format!(
        "\"{name}\" is not an IANA time zone name such as \"Europe/London\", \"America/New_York\" or \"UTC\""
    ))
}

/// The setting's trimmed value, its name matched in any case like every setting; `None` when
/// unset or blank.
fn setting_value<'a>(settings: &'a BTreeMap<String, String>, setting: &str) -> Option<&'a str> {
    crate::names::setting_value(settings, setting).ok()
}

/// Common Windows time zone IDs and the IANA zone CLDR's `windowsZones` gives for each
/// (its territory "001"), for the message that refuses them.
const WINDOWS_IDS: [(&str, &str); 44] = [
    ("Dateline Standard Time", "Etc/GMT+12"),
    ("Hawaiian Standard Time", "Pacific/Honolulu"),
    ("Alaskan Standard Time", "America/Anchorage"),
    ("Pacific Standard Time", "America/Los_Angeles"),
    ("US Mountain Standard Time", "America/Phoenix"),
    ("Mountain Standard Time", "America/Denver"),
    ("Central America Standard Time", "America/Guatemala"),
    ("Central Standard Time", "America/Chicago"),
    ("Central Standard Time (Mexico)", "America/Mexico_City"),
    ("Canada Central Standard Time", "America/Regina"),
    ("SA Pacific Standard Time", "America/Bogota"),
    ("Eastern Standard Time", "America/New_York"),
    ("US Eastern Standard Time", "America/Indianapolis"),
    ("Atlantic Standard Time", "America/Halifax"),
    ("Pacific SA Standard Time", "America/Santiago"),
    ("Newfoundland Standard Time", "America/St_Johns"),
    ("E. South America Standard Time", "America/Sao_Paulo"),
    ("Argentina Standard Time", "America/Buenos_Aires"),
    ("UTC", "UTC"),
    ("GMT Standard Time", "Europe/London"),
    ("Greenwich Standard Time", "Atlantic/Reykjavik"),
    ("W. Europe Standard Time", "Europe/Berlin"),
    ("Central Europe Standard Time", "Europe/Budapest"),
    ("Romance Standard Time", "Europe/Paris"),
    ("Central European Standard Time", "Europe/Warsaw"),
    ("W. Central Africa Standard Time", "Africa/Lagos"),
    ("GTB Standard Time", "Europe/Bucharest"),
    ("FLE Standard Time", "Europe/Kiev"),
    ("Egypt Standard Time", "Africa/Cairo"),
    ("South Africa Standard Time", "Africa/Johannesburg"),
    ("Israel Standard Time", "Asia/Jerusalem"),
    ("Turkey Standard Time", "Europe/Istanbul"),
    ("Russian Standard Time", "Europe/Moscow"),
    ("Arabian Standard Time", "Asia/Dubai"),
    ("India Standard Time", "Asia/Calcutta"),
    ("SE Asia Standard Time", "Asia/Bangkok"),
    ("China Standard Time", "Asia/Shanghai"),
    ("Singapore Standard Time", "Asia/Singapore"),
    ("Tokyo Standard Time", "Asia/Tokyo"),
    ("Korea Standard Time", "Asia/Seoul"),
    ("W. Australia Standard Time", "Australia/Perth"),
    ("AUS Eastern Standard Time", "Australia/Sydney"),
    ("E. Australia Standard Time", "Australia/Brisbane"),
    ("New Zealand Standard Time", "Pacific/Auckland"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_suggested_iana_name_is_one_shoal_takes() {
        for (windows, iana) in WINDOWS_IDS {
            assert!(parse_time_zone(iana).is_ok(), "{windows}: {iana}");
            if windows == iana {
                continue;
            }
            let err = parse_time_zone(windows).unwrap_err();
            assert!(
                err.contains(&format!("write \"{iana}\"")),
                "{windows}: {err}"
            );
        }
    }
}
