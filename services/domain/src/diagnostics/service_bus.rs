//! A Service Bus trigger's entity as the management API shows it: whether it exists, whether
//! the connection may read it (listen-only rights make scaling fall back to the listeners'
//! load), and each declared entity setting the live entity does not have.
//!
//! The API probes the entity and passes what it found; the checks are decided here.

use crate::service_bus_entity::path::EntityPath;
use crate::service_bus_entity::settings::{EntitySettings, LiveEntitySettings, drift};

use super::{Check, CheckStatus};

/// What probing the entity found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EntityProbe {
    Found(LiveEntitySettings),
    NotFound,
    /// 401/403: the connection may receive but not read the entity.
    ListenOnly(String),
    /// The namespace did not answer (network, DNS, TLS, 5xx, timeout).
    Unreachable(String),
    /// The probe could not be made (e.g. the connection signs in as an identity this process
    /// cannot sign in as); nothing is known of the entity.
    NotChecked(String),
}

/// The checks for one Service Bus trigger's entity: subject `entity`, one `Warning` per
/// drifting setting (key `entity.<setting>`).
pub fn check_service_bus_entity(
    function: &str,
    binding: &str,
    entity: &EntityPath,
    declared: Option<&EntitySettings>,
    probe: &EntityProbe,
) -> Vec<Check> {
    let check = |key: Option<String>, status: CheckStatus, detail: String| Check {
        function: Some(function.to_owned()),
        binding: Some(binding.to_owned()),
        key,
        subject: "entity".to_owned(),
        status,
        detail,
    };
    let declares = declared.is_some_and(EntitySettings::declares_entity);
    match probe {
        EntityProbe::Found(live) => {
            let drifted = declared.map(|d| drift(d, live)).unwrap_or_default();
            let mut checks = vec![check(
                None,
                CheckStatus::Ok,
                match (declares, drifted.is_empty()) {
                    (true, true) => format!("{entity} exists and has the declared settings"),
                    (true, false) => format!(
                        "{entity} exists; {} declared setting(s) differ from the live entity",
                        drifted.len()
                    ),
                    (false, _) => format!("{entity} exists"),
                },
            )];
            checks.extend(drifted.into_iter().map(|d| {
                check(
                    Some(format!("entity.{}", d.setting)),
                    CheckStatus::Warning,
                    format!(
                        "{} is {} on the live entity but declared {}; the scheduler updates the entity when the connection has Manage rights",
                        d.setting, d.live, d.declared
                    ),
                )
            }));
            checks
        }
        EntityProbe::NotFound => vec![check(
            None,
            CheckStatus::Error,
            format!(
                "{entity} does not exist in the namespace: create it (Shoal does not create Service Bus entities)"
            ),
        )],
        EntityProbe::ListenOnly(why) => {
            let settings = if declares {
                "; the declared entity settings can be neither compared nor applied"
            } else {
                ""
            };
            vec![check(
                None,
                CheckStatus::Warning,
                format!(
                    "the connection may not read {entity} (listen-only rights: {why}): scaling falls back to incremental, on the listeners' own load{settings}"
                ),
            )]
        }
        EntityProbe::Unreachable(why) => vec![check(
            None,
            CheckStatus::Error,
            format!("the Service Bus namespace is unreachable: {why}"),
        )],
        EntityProbe::NotChecked(why) => vec![check(
            None,
            CheckStatus::Warning,
            format!("{entity} was not checked: {why}"),
        )],
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::json;

    use super::*;
    use crate::service_bus_entity::settings::TIMESPAN_MAX;

    fn live() -> LiveEntitySettings {
        LiveEntitySettings {
            default_message_time_to_live: TIMESPAN_MAX,
            dead_lettering_on_message_expiration: false,
            auto_delete_on_idle: TIMESPAN_MAX,
            max_delivery_count: 10,
            lock_duration: Duration::from_secs(60),
        }
    }

    #[test]
    fn each_probe_outcome_is_one_clear_check() {
        let queue = EntityPath::Queue("orders".into());
        let declared: EntitySettings =
            serde_json::from_value(json!({"lockDuration": "00:00:30", "maxDeliveryCount": 3}))
                .unwrap();
        let matching: EntitySettings =
            serde_json::from_value(json!({"lockDuration": "PT1M"})).unwrap();
        type Case<'a> = (
            Option<&'a EntitySettings>,
            EntityProbe,
            Vec<(Option<&'a str>, CheckStatus)>,
            &'a str,
        );
        let cases: Vec<Case> = vec![
            (
                None,
                EntityProbe::Found(live()),
                vec![(None, CheckStatus::Ok)],
                "queue orders exists",
            ),
            (
                Some(&matching),
                EntityProbe::Found(live()),
                vec![(None, CheckStatus::Ok)],
                "has the declared settings",
            ),
            (
                Some(&declared),
                EntityProbe::Found(live()),
                vec![
                    (None, CheckStatus::Ok),
                    (Some("entity.lockDuration"), CheckStatus::Warning),
                    (Some("entity.maxDeliveryCount"), CheckStatus::Warning),
                ],
                "2 declared setting(s) differ",
            ),
            (
                None,
                EntityProbe::NotFound,
                vec![(None, CheckStatus::Error)],
                "does not exist",
            ),
            (
                Some(&declared),
                EntityProbe::ListenOnly("401".into()),
                vec![(None, CheckStatus::Warning)],
                "scaling falls back to incremental",
            ),
            (
                None,
                EntityProbe::Unreachable("cannot connect".into()),
                vec![(None, CheckStatus::Error)],
                "unreachable: cannot connect",
            ),
            (
                None,
                EntityProbe::NotChecked("no identity".into()),
                vec![(None, CheckStatus::Warning)],
                "not checked",
            ),
        ];
        for (declared, probe, want, first_detail) in cases {
            let checks = check_service_bus_entity("f", "m", &queue, declared, &probe);
            let got: Vec<(Option<&str>, CheckStatus)> = checks
                .iter()
                .map(|c| (c.key.as_deref(), c.status))
                .collect();
            assert_eq!(got, want, "{probe:?}");
            assert!(
                checks[0].detail.contains(first_detail),
                "{}",
                checks[0].detail
            );
            assert!(checks.iter().all(|c| c.subject == "entity"));
        }
    }

    #[test]
    fn drift_names_both_values() {
        let declared: EntitySettings =
            serde_json::from_value(json!({"defaultMessageTimeToLive": "P14D"})).unwrap();
        let checks = check_service_bus_entity(
            "f",
            "m",
            &EntityPath::Queue("orders".into()),
            Some(&declared),
            &EntityProbe::Found(live()),
        );
        assert_eq!(
            checks[1].detail,
            "defaultMessageTimeToLive is unlimited on the live entity but declared P14D; the scheduler updates the entity when the connection has Manage rights"
        );
    }
}
