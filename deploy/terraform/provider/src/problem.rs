//! Errors of the management API (`application/problem+json`) turned into Terraform
//! diagnostics. A validation error names fields by their API path (`handler.url`,
//! `bindings[0].queueName`, `appSettings.FOO`); [`attribute_path`] maps that path onto the
//! resource's schema so Terraform shows the message against the attribute in the user's
//! configuration.

use std::borrow::Cow;

use shoal_client::{ApiError, TokenError};
use tf_provider::{AttributePath, Diagnostics};

/// How a resource's schema relates to the API's field paths.
pub struct FieldMap {
    /// API fields held as one JSON document attribute: (first path segment, attribute).
    pub documents: &'static [(&'static str, &'static str)],
    /// API fields that are string maps (their next segment is a key, not an attribute).
    pub maps: &'static [&'static str],
}

#[derive(Debug, PartialEq)]
enum Step {
    Name(String),
    Index(i64),
}

/// `a.b[2].c` as steps; `None` for a path that is not of that form.
fn steps(path: &str) -> Option<Vec<Step>> {
    let mut steps = Vec::new();
    for part in path.split('.') {
        let (name, mut rest) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if name.is_empty() && (rest.is_empty() || steps.is_empty()) {
            return None;
        }
        if !name.is_empty() {
            steps.push(Step::Name(name.to_owned()));
        }
        while let Some(inner) = rest.strip_prefix('[') {
            let end = inner.find(']')?;
            steps.push(Step::Index(inner[..end].parse().ok()?));
            rest = &inner[end + 1..];
        }
        if !rest.is_empty() {
            return None;
        }
    }
    Some(steps)
}

/// `maxRetryCount` → `max_retry_count`.
pub fn snake_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// The attribute an API field path concerns, or `None` when the path is not one the schema
/// has (the diagnostic then goes to the resource as a whole).
pub fn attribute_path(path: &str, fields: &FieldMap) -> Option<AttributePath> {
    let steps = steps(path)?;
    let Some(Step::Name(first)) = steps.first() else {
        return None;
    };
    if let Some((_, attribute)) = fields.documents.iter().find(|(api, _)| api == first) {
        return Some(AttributePath::new(*attribute));
    }
    let mut out = AttributePath::root();
    let mut in_map = false;
    for (i, step) in steps.iter().enumerate() {
        match step {
            Step::Name(_) if in_map => {
                // A key may itself contain dots: the rest of the path is the key.
                let key = path
                    .split_once(&format!("{}.", api_prefix(&steps[..i])))
                    .map(|(_, k)| k.to_owned())?;
                out.add_key(key);
                return Some(out);
            }
            Step::Name(name) => {
                in_map = fields.maps.contains(&name.as_str());
                out.add_attribute(Cow::Owned(snake_case(name)));
            }
            Step::Index(index) => {
                in_map = false;
                out.add_index(*index);
            }
        }
    }
    Some(out)
}

fn api_prefix(steps: &[Step]) -> String {
    let mut out = String::new();
    for step in steps {
        match step {
            Step::Name(n) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(n);
            }
            Step::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

/// Adds `error` to `diags`; `what` names the resource (`function app /tenants/t/apps/a`).
pub fn report(diags: &mut Diagnostics, error: &ApiError, what: &str, fields: &FieldMap) {
    let cannot_reach = format!("Cannot reach Shoal for {what}");
    match error {
        // No answer of the API's: the request and why, as the transport words it.
        ApiError::Unreachable { .. }
        | ApiError::NotJson { .. }
        | ApiError::Token(TokenError::Unreachable { .. }) => {
            diags.root_error(cannot_reach, error.to_string())
        }
        ApiError::Token(refused) => diags.root_error(
            "Cannot authenticate to Shoal",
            format!("{refused} (provider `token`, or `client_id` and `client_secret`)"),
        ),
        ApiError::Refused(refusal) if refusal.status == 412 => diags.root_error(
            format!("{what} was changed outside Terraform"),
            format!(
                "Shoal refused the {} (412 Precondition Failed): the resource's ETag is no \
                 longer the one Terraform read when it planned this change, so applying it would \
                 overwrite a change made since. Run `terraform plan` again to see the current \
                 state and apply a new plan.",
                refusal.method
            ),
        ),
        ApiError::Refused(refusal) => {
            let problem = refusal.problem_or_text();
            let mut placed = false;
            for field in &problem.errors {
                let detail = format!("`{}` {}", field.path, field.message);
                match attribute_path(&field.path, fields) {
                    Some(attribute) => {
                        placed = true;
                        diags.error(format!("Invalid value for {what}"), detail, attribute)
                    }
                    None => diags.root_error(format!("Invalid value for {what}"), detail),
                }
            }
            if !placed && problem.errors.is_empty() {
                let request = problem
                    .request_id
                    .as_deref()
                    .map(|id| format!(" (request id {id})"))
                    .unwrap_or_default();
                diags.root_error(
                    format!(
                        "Shoal refused {} {} for {what}: {} {}",
                        refusal.method, refusal.path, refusal.status, problem.title
                    ),
                    format!("{}{request}", problem.detail),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shoal_client::{FieldError, Problem, Refusal};
    use tf_provider::AttributePathStep as S;

    /// The API's answer `status` to a `PUT` of the app `a`, with `problem`.
    fn refused(status: u16, problem: Problem) -> ApiError {
        ApiError::Refused(Box::new(Refusal {
            status,
            method: "PUT",
            path: "/v1/tenants/t/apps/a".into(),
            url: "http://127.0.0.1:8080/v1/tenants/t/apps/a".parse().unwrap(),
            problem: Some(problem),
            text: String::new(),
        }))
    }

    const APP: FieldMap = FieldMap {
        documents: &[("hostConfig", "host_config")],
        maps: &["appSettings"],
    };
    const FUNCTION: FieldMap = FieldMap {
        documents: &[("bindings", "config_json"), ("scriptFile", "config_json")],
        maps: &[],
    };

    fn attr(name: &'static str) -> S {
        S::Attribute(name.into())
    }

    #[test]
    fn api_paths_map_onto_attributes() {
        let cases: Vec<(&str, &FieldMap, Option<Vec<S>>)> = vec![
            (
                "handler.url",
                &APP,
                Some(vec![attr("handler"), attr("url")]),
            ),
            (
                "handler.timeoutSeconds",
                &APP,
                Some(vec![attr("handler"), attr("timeout_seconds")]),
            ),
            (
                "hostConfig.extensions.queues.batchSize",
                &APP,
                Some(vec![attr("host_config")]),
            ),
            (
                "appSettings.FOO.BAR",
                &APP,
                Some(vec![attr("app_settings"), S::Key("FOO.BAR".into())]),
            ),
            (
                "identity.userAssignedIdentities[1]",
                &APP,
                Some(vec![
                    attr("identity"),
                    attr("user_assigned_identities"),
                    S::Index(1),
                ]),
            ),
            ("state", &APP, Some(vec![attr("state")])),
            (
                "bindings[0].queueName",
                &FUNCTION,
                Some(vec![attr("config_json")]),
            ),
            (
                "retry.maxRetryCount",
                &FUNCTION,
                Some(vec![attr("retry"), attr("max_retry_count")]),
            ),
            ("", &FUNCTION, None),
            ("a..b", &FUNCTION, None),
            ("a[x]", &FUNCTION, None),
            ("a[1", &FUNCTION, None),
        ];
        for (path, fields, expected) in cases {
            assert_eq!(
                attribute_path(path, fields).map(|p| p.steps),
                expected,
                "{path}"
            );
        }
    }

    #[test]
    fn snake_case_cases() {
        for (camel, snake) in [
            ("url", "url"),
            ("timeoutSeconds", "timeout_seconds"),
            ("maxRequestBodyBytes", "max_request_body_bytes"),
        ] {
            assert_eq!(snake_case(camel), snake);
        }
    }

    #[test]
    fn a_validation_error_lands_on_its_attribute_and_a_412_says_what_happened() {
        let mut diags = Diagnostics::default();
        let error = refused(
            422,
            Problem {
                title: "Unprocessable".into(),
                errors: vec![FieldError {
                    path: "handler.url".into(),
                    message: "must be an http or https URL".into(),
                }],
                ..Problem::default()
            },
        );
        report(&mut diags, &error, "function app a", &APP);
        assert_eq!(diags.errors.len(), 1);
        assert_eq!(
            diags.errors[0].attribute.steps,
            vec![attr("handler"), attr("url")]
        );
        assert!(
            diags.errors[0]
                .detail
                .contains("must be an http or https URL")
        );

        let mut diags = Diagnostics::default();
        let stale = refused(412, Problem::default());
        report(&mut diags, &stale, "function app a", &APP);
        assert!(
            diags.errors[0]
                .summary
                .contains("changed outside Terraform")
        );
    }
}
