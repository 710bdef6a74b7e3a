//! The provider block: where Shoal is and how to authenticate (`endpoint`; `token`, or
//! `client_id` and `client_secret`), each falling back to a `SHOAL_*` environment variable.

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use shoal_client::{ApiClient, Credentials, http_client};
use tf_provider::schema::{
    Attribute, AttributeConstraint, AttributeType, Block, Description, Schema,
};
use tf_provider::value::{Value, ValueEmpty};
use tf_provider::{AttributePath, Diagnostics, DynamicDataSource, DynamicResource, Provider};

use crate::data_sources::{AppIdentityData, FunctionAppData, FunctionData, RoleDefinitionData};
use crate::resources::function::FunctionResource;
use crate::resources::function_app::FunctionAppResource;
use crate::resources::principal::{PrincipalKind, PrincipalResource};
use crate::resources::role_assignment::RoleAssignmentResource;
use crate::resources::role_definition::RoleDefinitionResource;
use crate::resources::tenant::TenantResource;
use crate::shared_client::SharedClient;

#[derive(Default)]
pub struct ShoalProvider {
    client: SharedClient,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ProviderConfig {
    pub endpoint: Value<String>,
    pub token: Value<String>,
    pub client_id: Value<String>,
    pub client_secret: Value<String>,
}

/// How the provider authenticates, once configuration and environment are merged.
#[derive(Debug, PartialEq)]
pub enum Auth {
    Token(String),
    ClientSecret { client_id: String, secret: String },
}

/// Merges the provider block with the `SHOAL_*` variables (the block wins) and checks the
/// result; errors name the attribute and the variable.
pub fn resolve(
    config: &ProviderConfig,
    env: impl Fn(&str) -> Option<String>,
) -> Result<(String, Auth), Vec<(&'static str, String)>> {
    let pick = |value: &Value<String>, var: &str| match value {
        Value::Value(v) if !v.is_empty() => Some(v.clone()),
        _ => env(var).filter(|v| !v.is_empty()),
    };
    let endpoint = pick(&config.endpoint, "SHOAL_ENDPOINT");
    let token = pick(&config.token, "SHOAL_TOKEN");
    let client_id = pick(&config.client_id, "SHOAL_CLIENT_ID");
    let secret = pick(&config.client_secret, "SHOAL_CLIENT_SECRET");
    let mut errors = Vec::new();
    let endpoint = match endpoint {
        None => {
            errors.push((
                "endpoint",
                "set `endpoint` (or SHOAL_ENDPOINT) to Shoal's URL, e.g. https://shoal.example.com"
                    .to_owned(),
            ));
            String::new()
        }
        Some(e) => match url::Url::parse(&e) {
            Ok(u) if matches!(u.scheme(), "http" | "https") && u.host().is_some() => {
                e.trim_end_matches('/').to_owned()
            }
            _ => {
                errors.push((
                    "endpoint",
                    format!("`{e}` is not an http or https URL (e.g. https://shoal.example.com)"),
                ));
                String::new()
            }
        },
    };
    let auth = match (token, client_id, secret) {
        (Some(_), Some(_), _) | (Some(_), _, Some(_)) => {
            errors.push((
                "token",
                "set either `token` or `client_id` and `client_secret`, not both \
                 (including SHOAL_TOKEN / SHOAL_CLIENT_ID / SHOAL_CLIENT_SECRET)"
                    .to_owned(),
            ));
            None
        }
        (Some(token), None, None) => Some(Auth::Token(token)),
        (None, Some(client_id), Some(secret)) => Some(Auth::ClientSecret { client_id, secret }),
        (None, Some(_), None) => {
            errors.push((
                "client_secret",
                "`client_id` needs `client_secret` (or SHOAL_CLIENT_SECRET)".to_owned(),
            ));
            None
        }
        (None, None, Some(_)) => {
            errors.push((
                "client_id",
                "`client_secret` needs `client_id` (or SHOAL_CLIENT_ID)".to_owned(),
            ));
            None
        }
        (None, None, None) => {
            errors.push((
                "token",
                "set `token` (or SHOAL_TOKEN), or `client_id` and `client_secret` \
                 (or SHOAL_CLIENT_ID and SHOAL_CLIENT_SECRET)"
                    .to_owned(),
            ));
            None
        }
    };
    match auth {
        Some(auth) if errors.is_empty() => Ok((endpoint, auth)),
        _ => Err(errors),
    }
}

fn string(description: &str, sensitive: bool) -> Attribute {
    Attribute {
        attr_type: AttributeType::String,
        description: Description::markdown(description),
        constraint: AttributeConstraint::Optional,
        sensitive,
        deprecated: false,
    }
}

#[async_trait]
impl Provider for ShoalProvider {
    type Config<'a> = ProviderConfig;
    type MetaState<'a> = ValueEmpty;

    fn schema(&self, _diags: &mut Diagnostics) -> Option<Schema> {
        Some(Schema {
            version: 1,
            block: Block {
                version: 1,
                description: Description::markdown(
                    "Manages Shoal function apps and functions through Shoal's management API.",
                ),
                attributes: HashMap::from([
                    (
                        "endpoint".to_owned(),
                        string(
                            "Shoal's base URL, e.g. `https://shoal.example.com` (without `/v1`). \
                             Default: `SHOAL_ENDPOINT`.",
                            false,
                        ),
                    ),
                    (
                        "token".to_owned(),
                        string(
                            "A bearer token for the management API. Default: `SHOAL_TOKEN`.",
                            true,
                        ),
                    ),
                    (
                        "client_id".to_owned(),
                        string(
                            "A service principal's client id, traded with `client_secret` at \
                             Shoal's token endpoint. Default: `SHOAL_CLIENT_ID`.",
                            false,
                        ),
                    ),
                    (
                        "client_secret".to_owned(),
                        string(
                            "The service principal's secret. Default: `SHOAL_CLIENT_SECRET`.",
                            true,
                        ),
                    ),
                ]),
                ..Default::default()
            },
        })
    }

    async fn configure<'a>(
        &self,
        diags: &mut Diagnostics,
        _terraform_version: String,
        config: Self::Config<'a>,
    ) -> Option<()> {
        let (endpoint, auth) = match resolve(&config, |var| std::env::var(var).ok()) {
            Ok(resolved) => resolved,
            Err(errors) => {
                for (attribute, message) in errors {
                    diags.error(
                        "Invalid Shoal provider configuration",
                        message,
                        AttributePath::new(attribute),
                    );
                }
                return Some(());
            }
        };
        let credentials = match auth {
            Auth::Token(token) => Credentials::Token(token),
            Auth::ClientSecret { client_id, secret } => {
                Credentials::client_secret(client_id, secret)
            }
        };
        let client = url::Url::parse(&endpoint)
            .map_err(|e| format!("`{endpoint}`: {e}"))
            .and_then(|base| {
                let http = http_client(concat!(
                    "terraform-provider-shoal/",
                    env!("CARGO_PKG_VERSION")
                ))?;
                Ok(ApiClient::new(http, base, credentials))
            });
        match client {
            Ok(client) => {
                if let Ok(mut shared) = self.client.write() {
                    *shared = Some(Arc::new(client));
                }
            }
            Err(message) => diags.root_error("Cannot configure the Shoal provider", message),
        }
        Some(())
    }

    /// Names without the `shoal_` prefix, which tf-provider adds.
    fn get_resources(
        &self,
        _diags: &mut Diagnostics,
    ) -> Option<HashMap<String, Box<dyn DynamicResource>>> {
        Some(HashMap::from([
            (
                "user_assigned_identity".to_owned(),
                Box::new(PrincipalResource::new(
                    self.client.clone(),
                    PrincipalKind::UserAssignedIdentity,
                )) as Box<dyn DynamicResource>,
            ),
            (
                "service_principal".to_owned(),
                Box::new(PrincipalResource::new(
                    self.client.clone(),
                    PrincipalKind::ServicePrincipal,
                )) as Box<dyn DynamicResource>,
            ),
            (
                "role_definition".to_owned(),
                Box::new(RoleDefinitionResource::new(self.client.clone()))
                    as Box<dyn DynamicResource>,
            ),
            (
                "role_assignment".to_owned(),
                Box::new(RoleAssignmentResource::new(self.client.clone()))
                    as Box<dyn DynamicResource>,
            ),
            (
                "tenant".to_owned(),
                Box::new(TenantResource::new(self.client.clone())) as Box<dyn DynamicResource>,
            ),
            (
                "function_app".to_owned(),
                Box::new(FunctionAppResource::new(self.client.clone())) as Box<dyn DynamicResource>,
            ),
            (
                "function".to_owned(),
                Box::new(FunctionResource::new(self.client.clone())) as Box<dyn DynamicResource>,
            ),
        ]))
    }

    fn get_data_sources(
        &self,
        _diags: &mut Diagnostics,
    ) -> Option<HashMap<String, Box<dyn DynamicDataSource>>> {
        let client = || self.client.clone();
        Some(HashMap::from([
            (
                "function_app".to_owned(),
                Box::new(FunctionAppData { client: client() }) as Box<dyn DynamicDataSource>,
            ),
            (
                "function".to_owned(),
                Box::new(FunctionData { client: client() }) as Box<dyn DynamicDataSource>,
            ),
            (
                "role_definition".to_owned(),
                Box::new(RoleDefinitionData { client: client() }) as Box<dyn DynamicDataSource>,
            ),
            (
                "function_app_identity".to_owned(),
                Box::new(AppIdentityData { client: client() }) as Box<dyn DynamicDataSource>,
            ),
        ]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(
        endpoint: Option<&str>,
        token: Option<&str>,
        id: Option<&str>,
        secret: Option<&str>,
    ) -> ProviderConfig {
        let v = |s: Option<&str>| s.map(|s| Value::Value(s.to_owned())).unwrap_or(Value::Null);
        ProviderConfig {
            endpoint: v(endpoint),
            token: v(token),
            client_id: v(id),
            client_secret: v(secret),
        }
    }

    #[test]
    fn configuration_and_environment_merge_with_errors_naming_the_attribute() {
        let no_env = |_: &str| None;
        assert_eq!(
            resolve(&config(Some("http://h:1/"), Some("t"), None, None), no_env),
            Ok(("http://h:1".to_owned(), Auth::Token("t".to_owned())))
        );
        let env = |var: &str| match var {
            "SHOAL_ENDPOINT" => Some("https://env".to_owned()),
            "SHOAL_CLIENT_ID" => Some("ci".to_owned()),
            "SHOAL_CLIENT_SECRET" => Some("cs".to_owned()),
            _ => None,
        };
        assert_eq!(
            resolve(&config(None, None, None, None), env),
            Ok((
                "https://env".to_owned(),
                Auth::ClientSecret {
                    client_id: "ci".to_owned(),
                    secret: "cs".to_owned()
                }
            ))
        );
        // The block wins over the environment.
        assert_eq!(
            resolve(
                &config(Some("http://block"), None, Some("b"), Some("s")),
                env
            )
            .unwrap(),
            (
                "http://block".to_owned(),
                Auth::ClientSecret {
                    client_id: "b".to_owned(),
                    secret: "s".to_owned()
                }
            )
        );
        let errors = |c: ProviderConfig| {
            resolve(&c, no_env)
                .unwrap_err()
                .into_iter()
                .map(|(a, _)| a)
                .collect::<Vec<_>>()
        };
        assert_eq!(errors(config(None, Some("t"), None, None)), ["endpoint"]);
        assert_eq!(
            errors(config(Some("ftp://h"), Some("t"), None, None)),
            ["endpoint"]
        );
        assert_eq!(
            errors(config(Some("http://h"), None, None, None)),
            ["token"]
        );
        assert_eq!(
            errors(config(Some("http://h"), None, Some("i"), None)),
            ["client_secret"]
        );
        assert_eq!(
            errors(config(Some("http://h"), None, None, Some("s"))),
            ["client_id"]
        );
        assert_eq!(
            errors(config(Some("http://h"), Some("t"), Some("i"), Some("s"))),
            ["token"]
        );
    }
}
