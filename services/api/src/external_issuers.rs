//! Bearer tokens from external OIDC issuers (Entra ID, Keycloak, …) that the operator trusts.
//!
//! A user is a principal registered in a tenant with the `(issuer, subject)` of their account
//! at the identity provider; their access is their role assignments, as for any registered
//! principal. Each tenant registers its users itself, so one account may be a user of several
//! tenants: a request about tenant T acts as T's registration, and no registration's
//! assignments reach beyond its own tenant. A token is routed here by its (unverified) `iss`
//! claim when that names a configured issuer; anything else is Shoal's own token and verified
//! as such. The signature is checked against the issuer's published JWK set (see [`keys`]),
//! then the subject is looked up among the registered users.

mod jwk;
mod keys;
mod registrations;

use std::collections::HashMap;
use std::str::FromStr;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine;
use shoal_domain::names::TenantName;
use sqlx::PgPool;
use url::Url;

use crate::error::ApiError;
use crate::expiring::ExpiringCache;
use crate::identity::Principal;
use registrations::{acting_as, registered_in, registrations};

/// One identity provider whose tokens Shoal accepts (`--external-issuer`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExternalIssuer {
    /// The exact `iss` of its tokens, e.g. `https://login.microsoftonline.com/{tenant}/v2.0`.
    pub issuer: String,
    /// The `aud` its tokens must carry for Shoal (Entra: the API's application id URI or
    /// client id).
    pub audience: String,
    /// Which claim identifies the user.
    pub subject_claim: SubjectClaim,
    /// Where its signing keys are published (default: the `jwks_uri` of its OpenID discovery
    /// document, `{issuer}/.well-known/openid-configuration`).
    pub jwks_uri: Option<Url>,
}

/// The claim a user is registered by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SubjectClaim {
    /// `oid` when the token has one, else `sub`: Entra ID's `sub` differs per application,
    /// its `oid` (the user's object id) does not.
    #[default]
    OidOrSub,
    Oid,
    Sub,
}

impl SubjectClaim {
    /// The user's subject out of a token's `oid` and `sub` claims.
    fn pick<'a>(self, oid: Option<&'a str>, sub: Option<&'a str>) -> Option<&'a str> {
        let oid = oid.filter(|s| !s.is_empty());
        let sub = sub.filter(|s| !s.is_empty());
        match self {
            SubjectClaim::OidOrSub => oid.or(sub),
            SubjectClaim::Oid => oid,
            SubjectClaim::Sub => sub,
        }
    }

    fn name(self) -> &'static str {
        match self {
            SubjectClaim::OidOrSub => "oid or sub",
            SubjectClaim::Oid => "oid",
            SubjectClaim::Sub => "sub",
        }
    }
}

impl FromStr for ExternalIssuer {
    type Err = String;

    /// Parses `issuer=URL,audience=AUD[,subject=oid|sub][,jwks=URL]`.
    fn from_str(text: &str) -> Result<ExternalIssuer, String> {
        let (mut issuer, mut audience, mut subject, mut jwks) = (None, None, None, None);
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (key, value) = part
                .split_once('=')
                .map(|(k, v)| (k.trim(), v.trim()))
                .ok_or_else(|| format!("`{part}` is not key=value"))?;
            let slot = match key {
                "issuer" => &mut issuer,
                "audience" => &mut audience,
                "subject" => &mut subject,
                "jwks" => &mut jwks,
                other => {
                    return Err(format!(
                        "unknown key `{other}` (use issuer, audience, subject, jwks)"
                    ));
                }
            };
            if slot.replace(value).is_some() {
                return Err(format!("`{key}` is given twice"));
            }
        }
        let issuer = issuer.ok_or("`issuer=` is required")?;
        trusted_url(issuer).map_err(|e| format!("issuer {e}"))?;
        let audience = audience
            .filter(|a| !a.is_empty())
            .ok_or("`audience=` is required")?;
        let subject_claim = match subject {
            None => SubjectClaim::OidOrSub,
            Some("oid") => SubjectClaim::Oid,
            Some("sub") => SubjectClaim::Sub,
            Some(other) => return Err(format!("subject `{other}` must be oid or sub")),
        };
        let jwks_uri = jwks
            .map(|j| trusted_url(j).map_err(|e| format!("jwks {e}")))
            .transpose()?;
        Ok(ExternalIssuer {
            issuer: issuer.to_string(),
            audience: audience.to_string(),
            subject_claim,
            jwks_uri,
        })
    }
}

/// Keys are fetched only over TLS, except from this machine (a development or test issuer).
fn trusted_url(text: &str) -> Result<Url, String> {
    let url = Url::parse(text).map_err(|e| format!("`{text}` is not a URL ({e})"))?;
    let loopback = matches!(url.host_str(), Some("localhost" | "127.0.0.1" | "[::1]"));
    match url.scheme() {
        "https" => {}
        "http" if loopback => {}
        _ => return Err(format!("`{text}` must be https (http only on localhost)")),
    }
    if url.query().is_some() || url.fragment().is_some() || !url.username().is_empty() {
        return Err(format!(
            "`{text}` must not have a query, fragment or credentials"
        ));
    }
    Ok(url)
}

/// Refuses an issuer configured twice or equal to Shoal's own: the `iss` claim decides which
/// keys verify a token, so it must name exactly one issuer.
pub fn check_distinct(issuers: &[ExternalIssuer], own_issuer: &str) -> Result<(), String> {
    for (i, external) in issuers.iter().enumerate() {
        if external.issuer == own_issuer {
            return Err(format!("{} is Shoal's own issuer", external.issuer));
        }
        if issuers[..i].iter().any(|e| e.issuer == external.issuer) {
            return Err(format!("{} is given twice", external.issuer));
        }
    }
    Ok(())
}

/// The trusted issuers and how their keys are kept.
#[derive(Debug, Clone)]
pub struct ExternalIssuersConfig {
    pub issuers: Vec<ExternalIssuer>,
    /// A token naming a key the issuer's JWK set lacks refetches it at most this often, so
    /// forged key ids cannot make Shoal hammer the identity provider.
    pub unknown_key_refetch: Duration,
    /// Keys are refetched this long after the last successful fetch (removed keys stop
    /// verifying then).
    pub max_key_age: Duration,
}

impl Default for ExternalIssuersConfig {
    fn default() -> Self {
        ExternalIssuersConfig {
            issuers: Vec::new(),
            unknown_key_refetch: Duration::from_secs(30),
            max_key_age: Duration::from_secs(3600),
        }
    }
}

/// A verified token's registrations are remembered this long at most (and never past the
/// token's expiry), so a user deleted and registered again is found anew within a minute. A
/// request about a tenant the remembered registrations lack reads them again at once, so a new
/// registration needs no wait.
const VERIFIED_TTL: u64 = 60;
const VERIFIED_CACHE_CAPACITY: usize = 4096;

/// A token that verified and names a registered user.
#[derive(Clone)]
struct Remembered {
    subject: String,
    /// The token's `exp` (Unix time).
    expires: u64,
    /// The subject's registrations ([`Principal::Registered`]), one per tenant, by tenant name.
    registrations: Arc<[Principal]>,
    issuer: Arc<keys::TrustedIssuer>,
    /// The issuer's key generation it verified with: void once the keys change.
    generation: u64,
}

/// The configured issuers, by `iss`.
#[derive(Clone)]
pub struct ExternalIssuers {
    by_issuer: Arc<HashMap<String, Arc<keys::TrustedIssuer>>>,
    /// Keyed by the whole token, so only a token that verified can hit; held until Unix time.
    verified: Arc<ExpiringCache<String, Remembered, u64>>,
}

impl Default for ExternalIssuers {
    fn default() -> Self {
        ExternalIssuers {
            by_issuer: Arc::default(),
            verified: Arc::new(ExpiringCache::new(VERIFIED_CACHE_CAPACITY)),
        }
    }
}

impl std::fmt::Debug for ExternalIssuers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.by_issuer.keys()).finish()
    }
}

impl ExternalIssuers {
    pub fn new(config: &ExternalIssuersConfig) -> anyhow::Result<ExternalIssuers> {
        if config.issuers.is_empty() {
            return Ok(ExternalIssuers::default());
        }
        let http = keys::http_client()?;
        let mut by_issuer = HashMap::new();
        for issuer in &config.issuers {
            let trusted = keys::TrustedIssuer::new(issuer.clone(), http.clone(), config);
            if by_issuer
                .insert(issuer.issuer.clone(), Arc::new(trusted))
                .is_some()
            {
                anyhow::bail!("external issuer {} is configured twice", issuer.issuer);
            }
        }
        Ok(ExternalIssuers {
            by_issuer: Arc::new(by_issuer),
            ..ExternalIssuers::default()
        })
    }

    /// Whether users may be registered with `issuer`: it is one of the configured issuers.
    pub fn trusts(&self, issuer: &str) -> bool {
        self.by_issuer.contains_key(issuer)
    }

    /// The configured issuers, sorted, for messages that name them.
    pub fn trusted(&self) -> Vec<&str> {
        let mut issuers: Vec<&str> = self.by_issuer.keys().map(String::as_str).collect();
        issuers.sort_unstable();
        issuers
    }

    /// The registered user a token from a configured issuer acts as in a request about
    /// `tenant`; `None` when the token does not claim to come from one (it is then Shoal's own,
    /// or nobody's).
    pub async fn authenticate(
        &self,
        pool: &PgPool,
        token: &str,
        tenant: Option<&TenantName>,
    ) -> Result<Option<Principal>, ApiError> {
        if self.by_issuer.is_empty() {
            return Ok(None);
        }
        let now = unix_now();
        let (issuer, subject, expires, generation) = match self.verified.get(token, now) {
            Some(hit) if hit.issuer.generation() == hit.generation => {
                hit.issuer.refresh_if_old();
                // A tenant the remembered registrations lack may have registered the user
                // since: read them again rather than make a new registration wait.
                let remembered = match tenant {
                    Some(tenant) => registered_in(&hit.registrations, tenant),
                    None => hit.registrations.first(),
                };
                if let Some(principal) = remembered {
                    return Ok(Some(principal.clone()));
                }
                (hit.issuer, hit.subject, hit.expires, hit.generation)
            }
            _ => {
                let Some(issuer) = claimed_issuer(token).and_then(|iss| self.by_issuer.get(&iss))
                else {
                    return Ok(None);
                };
                let verified = issuer.verify(token).await.map_err(|reason| {
                    tracing::debug!(issuer = %issuer.issuer(), %reason, "external token refused");
                    ApiError::Unauthorized(reason)
                })?;
                (
                    issuer.clone(),
                    verified.subject,
                    verified.expires,
                    verified.generation,
                )
            }
        };
        let registrations = registrations(pool, issuer.issuer(), &subject).await?;
        let Some(principal) = acting_as(&registrations, tenant).cloned() else {
            return Err(ApiError::Unauthorized(format!(
                "the token's subject is not registered in any tenant as a user of {}",
                issuer.issuer()
            )));
        };
        self.verified.insert(
            token.to_string(),
            Remembered {
                subject,
                expires,
                registrations,
                issuer,
                generation,
            },
            expires.min(now + VERIFIED_TTL),
            now,
        );
        Ok(Some(principal))
    }
}

/// The `iss` claim of a JWT, unverified: it only chooses which keys to verify with.
fn claimed_issuer(token: &str) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Issuer {
        iss: Option<String>,
    }
    let mut parts = token.split('.');
    let (_, payload, _) = (parts.next()?, parts.next()?, parts.next()?);
    let json = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload)
        .ok()?;
    serde_json::from_slice::<Issuer>(&json).ok()?.iss
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<ExternalIssuer, String> {
        text.parse()
    }

    #[test]
    fn issuer_and_audience_are_enough() {
        let parsed = parse("issuer=https://login.example.com/x/v2.0,audience=api://shoal").unwrap();
        assert_eq!(
            parsed,
            ExternalIssuer {
                issuer: "https://login.example.com/x/v2.0".into(),
                audience: "api://shoal".into(),
                subject_claim: SubjectClaim::OidOrSub,
                jwks_uri: None,
            }
        );
    }

    #[test]
    fn every_key_in_any_order() {
        let parsed = parse(
            " jwks=https://kc.example.com/certs , subject=sub,audience=shoal,\
             issuer=https://kc.example.com/realms/acme",
        )
        .unwrap();
        assert_eq!(parsed.issuer, "https://kc.example.com/realms/acme");
        assert_eq!(parsed.audience, "shoal");
        assert_eq!(parsed.subject_claim, SubjectClaim::Sub);
        assert_eq!(
            parsed.jwks_uri.unwrap().as_str(),
            "https://kc.example.com/certs"
        );
        assert_eq!(
            parse("issuer=http://127.0.0.1:8081,audience=a,subject=oid")
                .unwrap()
                .subject_claim,
            SubjectClaim::Oid
        );
        assert!(parse("issuer=http://localhost:9000/realms/dev,audience=a").is_ok());
    }

    #[test]
    fn the_issuer_string_is_kept_as_written() {
        // `iss` is compared exactly; URL normalisation would add a trailing slash here.
        let parsed = parse("issuer=https://accounts.example.com,audience=a").unwrap();
        assert_eq!(parsed.issuer, "https://accounts.example.com");
    }

    #[test]
    fn bad_specs_say_what_is_wrong() {
        let cases = [
            ("", "`issuer=` is required"),
            ("audience=a", "`issuer=` is required"),
            ("issuer=https://i.example.com", "`audience=` is required"),
            (
                "issuer=https://i.example.com,audience=",
                "`audience=` is required",
            ),
            ("issuer=not a url,audience=a", "not a URL"),
            ("issuer=http://i.example.com,audience=a", "must be https"),
            ("issuer=ftp://127.0.0.1,audience=a", "must be https"),
            (
                "issuer=https://i.example.com?x=1,audience=a",
                "must not have a query",
            ),
            ("issuer=https://u:p@i.example.com,audience=a", "credentials"),
            (
                "issuer=https://i.example.com,audience=a,subject=email",
                "must be oid or sub",
            ),
            (
                "issuer=https://i.example.com,audience=a,jwks=http://keys.example.com",
                "jwks",
            ),
            (
                "issuer=https://i.example.com,audience=a,scope=x",
                "unknown key `scope`",
            ),
            (
                "issuer=https://i.example.com,audience=a,audience=b",
                "`audience` is given twice",
            ),
            ("issuer=https://i.example.com,audience", "not key=value"),
        ];
        for (text, expected) in cases {
            let err = parse(text).unwrap_err();
            assert!(err.contains(expected), "{text:?}: {err}");
        }
    }

    #[test]
    fn issuers_must_be_distinct_from_each_other_and_from_shoal() {
        let a = parse("issuer=https://a.example.com,audience=x").unwrap();
        let b = parse("issuer=https://b.example.com,audience=x").unwrap();
        assert!(check_distinct(&[a.clone(), b.clone()], "urn:shoal").is_ok());
        assert!(
            check_distinct(&[a.clone(), b, a.clone()], "urn:shoal")
                .unwrap_err()
                .contains("given twice")
        );
        assert!(
            check_distinct(&[a], "https://a.example.com")
                .unwrap_err()
                .contains("Shoal's own issuer")
        );
    }

    #[test]
    fn the_subject_is_oid_else_sub_unless_configured() {
        let cases = [
            (SubjectClaim::OidOrSub, Some("o"), Some("s"), Some("o")),
            (SubjectClaim::OidOrSub, None, Some("s"), Some("s")),
            (SubjectClaim::OidOrSub, Some(""), Some("s"), Some("s")),
            (SubjectClaim::OidOrSub, None, None, None),
            (SubjectClaim::Oid, None, Some("s"), None),
            (SubjectClaim::Oid, Some("o"), Some("s"), Some("o")),
            (SubjectClaim::Sub, Some("o"), Some("s"), Some("s")),
            (SubjectClaim::Sub, Some("o"), None, None),
        ];
        for (claim, oid, sub, expected) in cases {
            assert_eq!(claim.pick(oid, sub), expected, "{claim:?} {oid:?} {sub:?}");
        }
    }

    #[test]
    fn the_claimed_issuer_is_read_without_verifying() {
        let engine = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let payload = engine.encode(r#"{"iss":"https://i.example.com","sub":"x"}"#);
        assert_eq!(
            claimed_issuer(&format!("e30.{payload}.sig")).as_deref(),
            Some("https://i.example.com")
        );
        for garbage in [
            "",
            "a.b",
            "e30.!!!.sig",
            &format!("e30.{}.s", engine.encode("[1]")),
        ] {
            assert_eq!(claimed_issuer(garbage), None, "{garbage}");
        }
    }
}
