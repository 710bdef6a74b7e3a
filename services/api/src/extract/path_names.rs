//! Path segments as the domain's names: `{tenant}`, `{app}` and `{function}` parsed into
//! [`TenantName`], [`AppName`] and [`FunctionName`] before the handler runs. A segment that is
//! not a valid name is a 422 whose `errors[].path` is the parameter's name; one that does not
//! decode keeps axum's own rejection (a 400 the problem middleware completes).
//!
//! Put these after the [`Caller`](crate::access::Caller) in a handler's arguments: extractors
//! run in order, and a missing token answers 401 before a bad name answers 422.

use axum::extract::{FromRequestParts, RawPathParams};
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use shoal_domain::names::{AppName, FunctionName, TenantName};

use crate::error::ApiError;

/// `/…/{tenant}/…`
pub struct TenantPath(pub TenantName);

/// `/…/{tenant}/…/{app}/…`
pub struct AppPath(pub TenantName, pub AppName);

/// `/…/{tenant}/…/{app}/…/{function}`
pub struct FunctionPath(pub TenantName, pub AppName, pub FunctionName);

/// `/webhooks/{tenant}/{app}/{function}…`: the ingress's names. One that is not a valid name
/// answers 404 like one that does not exist, so the ingress says nothing about which names
/// could exist.
pub struct InvokedFunction(pub TenantName, pub AppName, pub FunctionName);

/// `/…/{tenant}/…/{x}`: the tenant as a name and the route's other segment as sent, for
/// resources that read their own names (principals, role definitions, assignments).
pub struct TenantScoped(pub TenantName, pub String);

/// The route's parameters, decoded, in the order the route names them.
struct Segments(Vec<(String, String)>);

impl Segments {
    async fn of<S: Send + Sync>(parts: &mut Parts, state: &S) -> Result<Segments, Response> {
        let params = RawPathParams::from_request_parts(parts, state)
            .await
            .map_err(IntoResponse::into_response)?;
        Ok(Segments(
            params
                .iter()
                .map(|(name, value)| (name.to_string(), value.to_string()))
                .collect(),
        ))
    }

    /// The parameter `name` parsed with `parse`; a route without it is a programming error
    /// (500), a value that does not parse is the 422 naming it.
    fn parse<T>(&self, name: &str, parse: fn(&str) -> Result<T, String>) -> Result<T, ApiError> {
        let raw = self.raw(name)?;
        parse(raw).map_err(|message| ApiError::validation(name, message))
    }

    fn raw(&self, name: &str) -> Result<&str, ApiError> {
        self.0
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, value)| value.as_str())
            .ok_or_else(|| {
                ApiError::Internal(anyhow::anyhow!("the route has no {{{name}}} parameter"))
            })
    }

    /// The one parameter that is not `{tenant}`.
    fn other_than_tenant(&self) -> Result<&str, ApiError> {
        match &self.0[..] {
            [(first, _), (_, value)] | [(_, value), (first, _)] if first == "tenant" => Ok(value),
            _ => Err(ApiError::Internal(anyhow::anyhow!(
                "the route has not exactly {{tenant}} and one more parameter"
            ))),
        }
    }
}

fn tenant(raw: &str) -> Result<TenantName, String> {
    TenantName::parse(raw).map_err(|m| m.to_string())
}

fn app(raw: &str) -> Result<AppName, String> {
    AppName::parse(raw).map_err(|m| m.to_string())
}

fn function(raw: &str) -> Result<FunctionName, String> {
    FunctionName::parse(raw).map_err(|m| m.to_string())
}

impl<S: Send + Sync> FromRequestParts<S> for TenantPath {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Response> {
        let segments = Segments::of(parts, state).await?;
        let tenant = segments
            .parse("tenant", tenant)
            .map_err(IntoResponse::into_response)?;
        Ok(TenantPath(tenant))
    }
}

impl<S: Send + Sync> FromRequestParts<S> for AppPath {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Response> {
        let segments = Segments::of(parts, state).await?;
        let names = || {
            Ok(AppPath(
                segments.parse("tenant", tenant)?,
                segments.parse("app", app)?,
            ))
        };
        names().map_err(|e: ApiError| e.into_response())
    }
}

impl<S: Send + Sync> FromRequestParts<S> for FunctionPath {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Response> {
        let segments = Segments::of(parts, state).await?;
        let names = || {
            Ok(FunctionPath(
                segments.parse("tenant", tenant)?,
                segments.parse("app", app)?,
                segments.parse("function", function)?,
            ))
        };
        names().map_err(|e: ApiError| e.into_response())
    }
}

impl<S: Send + Sync> FromRequestParts<S> for InvokedFunction {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Response> {
        let segments = Segments::of(parts, state).await?;
        let names = || {
            Ok(InvokedFunction(
                segments.parse("tenant", tenant)?,
                segments.parse("app", app)?,
                segments.parse("function", function)?,
            ))
        };
        names().map_err(|_: ApiError| ApiError::NotFound.into_response())
    }
}

impl<S: Send + Sync> FromRequestParts<S> for TenantScoped {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Response> {
        let segments = Segments::of(parts, state).await?;
        let names = || {
            let tenant = segments.parse("tenant", tenant)?;
            Ok(TenantScoped(
                tenant,
                segments.other_than_tenant()?.to_string(),
            ))
        };
        names().map_err(|e: ApiError| e.into_response())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segments(pairs: &[(&str, &str)]) -> Segments {
        Segments(
            pairs
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect(),
        )
    }

    #[test]
    fn names_parse_or_name_the_parameter() {
        let cases: [(&str, &str, Option<u16>); 6] = [
            ("tenant", "contoso", None),
            ("tenant", "Not A Name", Some(422)),
            ("app", "orders", None),
            ("app", "-bad-", Some(422)),
            ("function", "order", None),
            ("missing", "", Some(500)),
        ];
        let all = segments(&[("tenant", "x"), ("app", "x"), ("function", "x")]);
        for (name, value, expected) in cases {
            let one = segments(&[(name, value)]);
            let checked = match name {
                "app" => one.parse(name, app).map(|_| ()),
                "function" => one.parse(name, function).map(|_| ()),
                "missing" => all.raw(name).map(|_| ()),
                _ => one.parse(name, tenant).map(|_| ()),
            };
            assert_eq!(
                checked.err().map(|e| e.into_response().status().as_u16()),
                expected,
                "{name}={value}"
            );
        }
    }

    #[test]
    fn the_segment_beside_the_tenant() {
        let cases = [
            (vec![("tenant", "t"), ("name", "n")], Ok("n")),
            (vec![("role", "r"), ("tenant", "t")], Ok("r")),
            (vec![("tenant", "t")], Err(500)),
            (vec![("a", "1"), ("b", "2")], Err(500)),
        ];
        for (pairs, expected) in cases {
            let segments = segments(&pairs);
            let got = segments
                .other_than_tenant()
                .map_err(|e| e.into_response().status().as_u16());
            assert_eq!(
                got.map(str::to_string),
                expected.map(str::to_string),
                "{pairs:?}"
            );
        }
    }
}
