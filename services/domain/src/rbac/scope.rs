//! Scopes: the resources a role assignment can be made at, from the platform root down to one
//! function.
//!
//! A scope is kept both as the text users write and store (`/tenants/contoso/apps/orders`) and
//! as its validated names, so `covers` compares names segment by segment: `/tenants/con` must
//! not cover `/tenants/contoso`, which a string-prefix test would get wrong. Names compare
//! exactly, like the primary keys they stand for. Keywords must be written in lower case so
//! each scope has exactly one spelling and assignments cannot be duplicated by case.

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};

use crate::names::{AppName, FunctionName, TenantName};

/// `/`, `/tenants/{t}`, `/tenants/{t}/apps/{a}`, `/tenants/{t}/apps/{a}/functions/{f}`.
///
/// Built only by the constructors and [`Scope::parse`], so the names inside are valid and a
/// function scope always has its app and tenant. On the wire it is the plain string.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Scope {
    // `text` is first so the derived order is the string's; the names follow from it.
    text: String,
    tenant: Option<TenantName>,
    app: Option<AppName>,
    function: Option<FunctionName>,
}

/// Why a scope string was refused; the message names the offending part.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ScopeError(String);

impl ScopeError {
    /// The message alone, for a field problem (`assignableScopes[0]: …`).
    pub fn message(&self) -> &str {
        &self.0
    }
}

/// The keywords in order, each with the kind of name it introduces and that kind with its
/// article, for messages.
const LEVELS: [(&str, &str, &str); 3] = [
    ("tenants", "tenant", "a tenant"),
    ("apps", "app", "an app"),
    ("functions", "function", "a function"),
];

impl Scope {
    /// The whole platform; an assignment here applies in every tenant.
    pub fn root() -> Scope {
        Scope {
            text: "/".to_owned(),
            tenant: None,
            app: None,
            function: None,
        }
    }

    pub fn tenant(t: &TenantName) -> Scope {
        Scope {
            text: format!("/tenants/{t}"),
            tenant: Some(t.clone()),
            app: None,
            function: None,
        }
    }

    pub fn app(t: &TenantName, a: &AppName) -> Scope {
        Scope {
            text: format!("/tenants/{t}/apps/{a}"),
            tenant: Some(t.clone()),
            app: Some(a.clone()),
            function: None,
        }
    }

    pub fn function(t: &TenantName, a: &AppName, f: &FunctionName) -> Scope {
        Scope {
            text: format!("/tenants/{t}/apps/{a}/functions/{f}"),
            tenant: Some(t.clone()),
            app: Some(a.clone()),
            function: Some(f.clone()),
        }
    }

    /// Parses the written form, checking every name with its own rule. There is exactly one
    /// spelling per scope: no trailing `/`, no empty segments, lower-case keywords.
    pub fn parse(text: &str) -> Result<Scope, ScopeError> {
        let fail = |message: String| Err(ScopeError(message));
        if text == "/" {
            return Ok(Scope::root());
        }
        let Some(rest) = text.strip_prefix('/') else {
            return fail(if text.is_empty() {
                "a scope must not be empty; the root scope is \"/\"".to_owned()
            } else {
                "a scope must start with \"/\"".to_owned()
            });
        };
        if rest.ends_with('/') {
            return fail("a scope must not end with \"/\"".to_owned());
        }
        let segments: Vec<&str> = rest.split('/').collect();
        if segments.iter().any(|s| s.is_empty()) {
            return fail("a scope must not contain an empty segment (\"//\")".to_owned());
        }

        let mut names: [Option<&str>; 3] = [None; 3];
        for (i, pair) in segments.chunks(2).enumerate() {
            let Some(&(keyword, _, a_kind)) = LEVELS.get(i) else {
                return fail(
                    "nothing may follow /functions/{function}, the narrowest scope".to_owned(),
                );
            };
            let written = pair[0];
            if written != keyword {
                return fail(if written.eq_ignore_ascii_case(keyword) {
                    format!(
                        "scope keyword {} must be written \"{keyword}\"",
                        quoted(written)
                    )
                } else {
                    format!(
                        "unknown scope segment {}, expected \"{keyword}\"",
                        quoted(written)
                    )
                });
            }
            let Some(name) = pair.get(1) else {
                return fail(format!("\"{keyword}\" must be followed by {a_kind} name"));
            };
            names[i] = Some(name);
        }

        let named = |i: usize, message: String| {
            ScopeError(format!(
                "{} name {}: {message}",
                LEVELS[i].1,
                quoted(names[i].unwrap_or_default())
            ))
        };
        let tenant = names[0]
            .map(|n| TenantName::parse(n).map_err(|m| named(0, m)))
            .transpose()?;
        let app = names[1]
            .map(|n| AppName::parse(n).map_err(|m| named(1, m)))
            .transpose()?;
        let function = names[2]
            .map(|n| FunctionName::parse(n).map_err(|m| named(2, m)))
            .transpose()?;
        Ok(Scope {
            text: text.to_owned(),
            tenant,
            app,
            function,
        })
    }

    /// True when `self` is `other` or one of its ancestors: assignments are inherited
    /// downwards only, never up to a parent or across to a sibling.
    pub fn covers(&self, other: &Scope) -> bool {
        fn within<T: PartialEq>(mine: &Option<T>, theirs: &Option<T>) -> bool {
            mine.is_none() || mine == theirs
        }
        within(&self.tenant, &other.tenant)
            && within(&self.app, &other.app)
            && within(&self.function, &other.function)
    }

    /// The tenant this scope lies in; `None` for the root.
    pub fn tenant_name(&self) -> Option<&TenantName> {
        self.tenant.as_ref()
    }

    /// The app this scope lies in; `None` for the root and tenant scopes.
    pub fn app_name(&self) -> Option<&AppName> {
        self.app.as_ref()
    }

    /// The function this scope is; `None` above function level.
    pub fn function_name(&self) -> Option<&FunctionName> {
        self.function.as_ref()
    }

    pub fn is_root(&self) -> bool {
        self.tenant.is_none()
    }

    /// The next scope up (`None` for the root), e.g. to list what an assignment inherits from.
    pub fn parent(&self) -> Option<Scope> {
        match (&self.tenant, &self.app, &self.function) {
            (Some(t), Some(a), Some(_)) => Some(Scope::app(t, a)),
            (Some(t), Some(_), None) => Some(Scope::tenant(t)),
            (Some(_), None, _) => Some(Scope::root()),
            (None, _, _) => None,
        }
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }
}

/// Quotes user input for a message, escaping control characters and cutting it short so an
/// error never echoes a whole oversized body.
fn quoted(s: &str) -> String {
    const MAX: usize = 64;
    if s.chars().count() <= MAX {
        format!("{s:?}")
    } else {
        let head: String = s.chars().take(MAX).collect();
        format!("{head:?}…")
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl AsRef<str> for Scope {
    fn as_ref(&self) -> &str {
        &self.text
    }
}

impl FromStr for Scope {
    type Err = ScopeError;
    fn from_str(s: &str) -> Result<Self, ScopeError> {
        Scope::parse(s)
    }
}

impl TryFrom<String> for Scope {
    type Error = ScopeError;
    fn try_from(s: String) -> Result<Self, ScopeError> {
        Scope::parse(&s)
    }
}

impl From<Scope> for String {
    fn from(scope: Scope) -> String {
        scope.text
    }
}

impl utoipa::PartialSchema for Scope {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .description(Some(
                "`/`, `/tenants/{tenant}`, `/tenants/{tenant}/apps/{app}` or \
                 `/tenants/{tenant}/apps/{app}/functions/{function}`",
            ))
            .pattern(Some(
                "^/$|^/tenants/[^/]+(/apps/[^/]+(/functions/[^/]+)?)?$",
            ))
            .examples(["/tenants/contoso/apps/orders-app"])
            .into()
    }
}

impl utoipa::ToSchema for Scope {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("Scope")
    }
}
