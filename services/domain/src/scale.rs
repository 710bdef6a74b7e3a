//! How an app scales: target-based (Azure's default) or incremental.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// The app setting Azure Functions uses to turn target-based scaling off.
pub const TARGET_BASED_SCALING_SETTING: &str = "TARGET_BASED_SCALING_ENABLED";

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum ScaleMode {
    /// Desired instances computed from each trigger's metric and per-instance target.
    Target,
    /// ±1 instance per decision, voted from recent samples.
    Incremental,
}

impl ScaleMode {
    /// Azure's rule: only `TARGET_BASED_SCALING_ENABLED=0` turns target-based scaling off;
    /// anything else, including `false` or an absent setting, leaves it on. Surrounding
    /// whitespace is ignored so a stray space from a copy-paste does not flip the mode.
    pub fn from_app_settings(settings: &BTreeMap<String, String>) -> ScaleMode {
        match settings.get(TARGET_BASED_SCALING_SETTING) {
            Some(value) if value.trim() == "0" => ScaleMode::Incremental,
            _ => ScaleMode::Target,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_zero_selects_incremental_scaling() {
        let cases = [
            (None, ScaleMode::Target),
            (Some("0"), ScaleMode::Incremental),
            (Some(" 0 "), ScaleMode::Incremental),
            (Some("0\n"), ScaleMode::Incremental),
            (Some("1"), ScaleMode::Target),
            (Some("false"), ScaleMode::Target),
            (Some(""), ScaleMode::Target),
            (Some("00"), ScaleMode::Target),
            (Some("O"), ScaleMode::Target),
        ];
        for (value, want) in cases {
            let mut settings = BTreeMap::new();
            settings.insert("OTHER".to_owned(), "0".to_owned());
            if let Some(value) = value {
                settings.insert(TARGET_BASED_SCALING_SETTING.to_owned(), value.to_owned());
            }
            assert_eq!(ScaleMode::from_app_settings(&settings), want, "{value:?}");
        }
    }

    #[test]
    fn serializes_as_lowercase_words() {
        assert_eq!(
            serde_json::to_string(&ScaleMode::Target).unwrap(),
            "\"target\""
        );
        assert_eq!(
            serde_json::to_string(&ScaleMode::Incremental).unwrap(),
            "\"incremental\""
        );
    }
}
