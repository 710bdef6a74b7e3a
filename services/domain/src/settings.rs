//! App settings: which values are masked on read, and what a valid settings object is.
//!
//! Every value is encrypted at rest regardless; masking decides what a plain `GET` shows. The
//! classifier errs towards masking — showing a secret is worse than hiding a harmless value,
//! which can still be read through `POST …/settings/list`.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::names::SettingName;
use crate::validation::{Problems, ValidationError, join_path};

/// What a masked setting value reads as.
pub const MASK: &str = "********";

/// Azure's limits: app settings are few and small; larger configuration belongs elsewhere.
pub const MAX_SETTINGS: usize = 500;
pub const MAX_VALUE_BYTES: usize = 64 * 1024;

/// Name fragments (lower case) that mark a setting as secret whatever its value.
const SECRET_NAME_PARTS: [&str; 6] = [
    "secret",
    "password",
    "pwd",
    "key",
    "token",
    "connectionstring",
];

/// Connection string keys (lower case) that carry credentials.
const SECRET_KEYS: [&str; 5] = [
    "accountkey",
    "sharedaccesskey",
    "sharedaccesssignature",
    "password",
    "pwd",
];

/// Query parameters (lower case) whose value is a credential: SAS signatures, Azure Functions'
/// function keys (`code`), and the tokens webhook URLs carry.
const SECRET_QUERY_PARAMETERS: [&str; 7] = [
    "sig",
    "code",
    "token",
    "access_token",
    "api_key",
    "apikey",
    "key",
];

/// Webhook URL prefixes whose URLs are credentials by themselves (the path is the secret).
const SECRET_URL_PARTS: [&str; 3] = [
    "hooks.slack.com",
    "discord.com/api/webhooks",
    "outlook.office.com/webhook",
];

/// Whether the API masks this setting's value on read. Secret when the name says so
/// (`…__clientSecret`, or containing `secret`, `password`, `pwd`, `key`, `token`,
/// `connectionstring`, in any case) or the value carries a credential: a connection string with
/// `AccountKey=`, `SharedAccessKey=`, `SharedAccessSignature=` or `Password=`, or a SAS `sig=`
/// query parameter. `UseDevelopmentStorage=true` is not secret: its key is published.
pub fn is_secret_setting(name: &str, value: &str) -> bool {
    let name = name.to_ascii_lowercase();
    if name.ends_with("__clientsecret") || SECRET_NAME_PARTS.iter().any(|part| name.contains(part))
    {
        return true;
    }
    let carries_credential = value.split(';').any(|part| {
        part.split_once('=').is_some_and(|(key, _)| {
            let key = key.trim().to_ascii_lowercase();
            SECRET_KEYS.contains(&key.as_str())
        })
    });
    carries_credential || carries_secret_text(value)
}

/// Credentials recognisable in a value whatever the setting's name: a secret query parameter
/// (`sig=`, `code=`, `token=`, …), a URL with a password (`postgres://user:pw@host`), a webhook
/// URL whose path is the secret, an HTTP `Basic`/`Bearer` credential, a PEM block.
fn carries_secret_text(value: &str) -> bool {
    let lower = value.trim().to_ascii_lowercase();
    let query_secret = SECRET_QUERY_PARAMETERS.iter().any(|p| {
        lower.starts_with(&format!("{p}="))
            || lower.contains(&format!("?{p}="))
            || lower.contains(&format!("&{p}="))
    });
    query_secret
        || has_url_password(&lower)
        || SECRET_URL_PARTS.iter().any(|h| lower.contains(h))
        || lower.starts_with("basic ")
        || lower.starts_with("bearer ")
        || lower.contains("-----begin ")
}

/// `scheme://user:password@…`: user information with a colon before the host.
fn has_url_password(lower: &str) -> bool {
    let Some((_, rest)) = lower.split_once("://") else {
        return false;
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    authority
        .rsplit_once('@')
        .is_some_and(|(user_info, _)| user_info.contains(':'))
}

/// Validates an `appSettings` object: setting names valid (see [`SettingName`]) and unique
/// ignoring case (Azure's configuration is case-insensitive, so `Foo` and `foo` would be one
/// setting there), values strings — Azure app settings are environment variables, so numbers
/// and booleans are rejected rather than silently converted — at most [`MAX_SETTINGS`] settings
/// of at most [`MAX_VALUE_BYTES`] each. Every problem is reported with path `<prefix>.<name>`.
pub fn validate_app_settings(
    value: &Value,
    prefix: &str,
) -> Result<BTreeMap<String, String>, ValidationError> {
    let Some(object) = value.as_object() else {
        return Err(ValidationError::single(
            prefix,
            "expected an object of setting names to string values",
        ));
    };
    let mut problems = Problems::new();
    if object.len() > MAX_SETTINGS {
        problems.push(
            prefix,
            format!(
                "must have at most {MAX_SETTINGS} settings, got {}",
                object.len()
            ),
        );
    }
    let mut settings = BTreeMap::new();
    let mut seen: BTreeMap<String, &str> = BTreeMap::new();
    for (name, value) in object {
        let path = join_path(prefix, name);
        if let Err(message) = SettingName::parse(name) {
            problems.push(path, format!("setting name {message}"));
            continue;
        }
        if let Some(first) = seen.insert(name.to_ascii_lowercase(), name) {
            problems.push(
                path,
                format!("duplicates setting \"{first}\" (setting names are case-insensitive)"),
            );
            continue;
        }
        match value {
            Value::String(s) if s.len() > MAX_VALUE_BYTES => {
                problems.push(path, format!("must be at most {MAX_VALUE_BYTES} bytes"));
            }
            Value::String(s) => {
                settings.insert(name.clone(), s.clone());
            }
            _ => problems.push(
                path,
                "expected a string (app setting values are strings; quote numbers and booleans)",
            ),
        }
    }
    problems.finish()?;
    Ok(settings)
}

/// A setting as stored: its value and whether reads mask it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredSetting {
    pub name: String,
    pub value: String,
    pub secret: bool,
}

/// The settings to store for what a client wrote, each classified secret or not. A value equal
/// to [`MASK`] keeps the current secret of that name, so a client can write back what it read
/// without erasing secrets; a mask with no such secret to keep is an error at its path.
pub fn settings_to_store(
    written: &BTreeMap<String, String>,
    current: &[StoredSetting],
) -> Result<Vec<StoredSetting>, ValidationError> {
    let mut problems = Problems::new();
    let mut stored = Vec::with_capacity(written.len());
    for (name, value) in written {
        if value == MASK {
            match current.iter().find(|s| &s.name == name && s.secret) {
                Some(kept) => stored.push(kept.clone()),
                None => problems.push(
                    format!("appSettings.{name}"),
                    "is the mask of a secret value, but the app has no such secret to keep; send the real value",
                ),
            }
        } else {
            stored.push(StoredSetting {
                name: name.clone(),
                value: value.clone(),
                secret: is_secret_setting(name, value),
            });
        }
    }
    problems.finish()?;
    Ok(stored)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn secret_settings_are_recognised() {
        let cases = [
            ("MyStorage__clientSecret", "abc", true),
            ("MYSTORAGE__CLIENTSECRET", "abc", true),
            ("ApiSecret", "x", true),
            ("DB_PASSWORD", "x", true),
            ("SqlPwd", "x", true),
            ("StripeApiKey", "x", true),
            ("GITHUB_TOKEN", "x", true),
            ("SqlConnectionString", "Server=x", true),
            (
                "AzureWebJobsStorage",
                "DefaultEndpointsProtocol=https;AccountName=a;AccountKey=abc==",
                true,
            ),
            (
                "MyServiceBus",
                "Endpoint=sb://ns/;SharedAccessKeyName=k;SharedAccessKey=v",
                true,
            ),
            (
                "Queue",
                "QueueEndpoint=https://a.queue.core.windows.net;SharedAccessSignature=sv=1&sig=x",
                true,
            ),
            ("Db", "Server=db;User Id=app;Password=hunter2", true),
            ("Db", "Server=db; password =hunter2", true),
            (
                "QueueUrl",
                "https://a.queue.core.windows.net/q?sv=2022&sig=abc",
                true,
            ),
            ("Sas", "sig=abc&se=2030", true),
            ("AzureWebJobsStorage", "UseDevelopmentStorage=true", false),
            (
                "MyStorage__queueServiceUri",
                "https://a.queue.core.windows.net",
                false,
            ),
            (
                "MyStorage__clientId",
                "00000000-0000-0000-0000-000000000000",
                false,
            ),
            ("TARGET_BASED_SCALING_ENABLED", "0", false),
            ("Greeting", "signature=fine", false),
            ("Design", "assign=yes", false),
            // Credentials in values whatever the name.
            (
                "DATABASE_URL",
                "postgres://app:hunter2@db.internal:5432/app",
                true,
            ),
            ("Broker", "amqps://user:pw@mq.example.com", true),
            ("Db", "Server=db;Uid=app;Pwd=hunter2", true),
            (
                "Alerts",
                "https://hooks.slack.com/services/T000/B000/XXXX",
                true,
            ),
            ("Chat", "https://discord.com/api/webhooks/1/abc", true),
            ("Fn", "https://app.azurewebsites.net/api/f?code=abc==", true),
            ("Hook", "https://example.com/hook?token=abc", true),
            ("Upstream", "Basic dXNlcjpwYXNz", true),
            ("Upstream", "Bearer eyJhbGciOiJSUzI1NiJ9.e30.sig", true),
            (
                "Cert",
                "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----",
                true,
            ),
            ("Homepage", "https://user@example.com/", false),
            ("Endpoint", "https://example.com/a?b=c", false),
            ("Mode", "Bearing north", false),
        ];
        for (name, value, want) in cases {
            assert_eq!(is_secret_setting(name, value), want, "{name}={value}");
        }
    }

    #[test]
    fn valid_settings_are_returned() {
        let settings = validate_app_settings(
            &json!({"A": "1", "My__clientId": "x", "Empty": ""}),
            "appSettings",
        )
        .unwrap();
        assert_eq!(settings.len(), 3);
        assert_eq!(settings["A"], "1");
        assert_eq!(
            validate_app_settings(&json!({}), "appSettings")
                .unwrap()
                .len(),
            0
        );
    }

    #[test]
    fn invalid_settings_report_every_problem_with_its_path() {
        let got = validate_app_settings(
            &json!({"Count": 3, "Enabled": true, "bad name": "x", "Foo": "a", "foo": "b", "Nothing": null}),
            "appSettings",
        )
        .unwrap_err();
        // Sorted: the order of object members depends on serde_json's `preserve_order`.
        let mut got: Vec<(String, String)> = got
            .errors
            .into_iter()
            .map(|e| (e.path, e.message))
            .collect();
        got.sort();
        let strings =
            "expected a string (app setting values are strings; quote numbers and booleans)";
        assert_eq!(
            got,
            [
                ("appSettings.Count".to_owned(), strings.to_owned()),
                ("appSettings.Enabled".to_owned(), strings.to_owned()),
                ("appSettings.Nothing".to_owned(), strings.to_owned()),
                (
                    "appSettings.bad name".to_owned(),
                    "setting name may contain only letters, digits, '_', '.', '-' and ':'"
                        .to_owned()
                ),
                (
                    "appSettings.foo".to_owned(),
                    "duplicates setting \"Foo\" (setting names are case-insensitive)".to_owned()
                ),
            ]
        );
    }

    #[test]
    fn limits_are_enforced() {
        let big = "x".repeat(MAX_VALUE_BYTES);
        assert!(validate_app_settings(&json!({"Big": big}), "appSettings").is_ok());
        let too_big = "x".repeat(MAX_VALUE_BYTES + 1);
        let err = validate_app_settings(&json!({"Big": too_big}), "appSettings").unwrap_err();
        assert_eq!(err.errors[0].message, "must be at most 65536 bytes");
        let many: serde_json::Map<String, Value> = (0..=MAX_SETTINGS)
            .map(|i| (format!("S{i}"), json!("v")))
            .collect();
        let err = validate_app_settings(&Value::Object(many), "appSettings").unwrap_err();
        assert_eq!(err.errors[0].path, "appSettings");
        assert_eq!(
            err.errors[0].message,
            "must have at most 500 settings, got 501"
        );
    }

    #[test]
    fn non_object_is_rejected() {
        let err = validate_app_settings(&json!(["A"]), "appSettings").unwrap_err();
        assert_eq!(err.errors[0].path, "appSettings");
    }

    #[test]
    fn a_mask_keeps_the_current_secret_and_is_an_error_without_one() {
        let current = vec![StoredSetting {
            name: "Key".into(),
            value: "s3cr3t".into(),
            secret: true,
        }];
        let written = BTreeMap::from([
            ("Key".to_string(), MASK.to_string()),
            ("Region".to_string(), "eu".to_string()),
        ]);
        let stored = settings_to_store(&written, &current).unwrap();
        assert_eq!(stored[0], current[0]);
        assert_eq!(
            stored[1],
            StoredSetting {
                name: "Region".into(),
                value: "eu".into(),
                secret: false
            }
        );
        let err = settings_to_store(&written, &[]).unwrap_err();
        assert_eq!(err.errors[0].path, "appSettings.Key");
        // A non-secret setting of that name is not kept: the mask never stands for plain text.
        let plain = vec![StoredSetting {
            name: "Key".into(),
            value: "x".into(),
            secret: false,
        }];
        assert!(settings_to_store(&written, &plain).is_err());
    }
}
