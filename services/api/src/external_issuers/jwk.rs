//! Published JSON Web Keys as Shoal verifies with them: which keys are usable and which
//! algorithms each may verify. Pure: fetching and holding the keys is `keys`.

use jsonwebtoken::{Algorithm, DecodingKey};
use serde::Deserialize;

/// RSA PKCS#1 v1.5 (what Entra ID and Keycloak sign with by default) and ECDSA.
pub(super) const ACCEPTED: [Algorithm; 5] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::ES256,
    Algorithm::ES384,
];

/// A published key ready to verify with, and the algorithms its JWK allows.
pub(super) struct VerifyingKey {
    pub algorithms: Vec<Algorithm>,
    pub key: DecodingKey,
}

/// A JWK as published; fields Shoal does not use are ignored.
#[derive(Debug, Deserialize)]
struct PublishedKey {
    kty: String,
    kid: Option<String>,
    #[serde(rename = "use")]
    usage: Option<String>,
    alg: Option<String>,
    crv: Option<String>,
    n: Option<String>,
    e: Option<String>,
    x: Option<String>,
    y: Option<String>,
}

/// A published key Shoal can verify with: its kid, the key, and its JWK as published. Keys
/// without a kid, for encryption, or of other types are skipped.
pub(super) fn usable_key(jwk: serde_json::Value) -> Option<(String, VerifyingKey, String)> {
    let published = jwk.to_string();
    let key: PublishedKey = serde_json::from_value(jwk).ok()?;
    let kid = key.kid.clone().filter(|k| !k.is_empty())?;
    let algorithms = accepted_algorithms(
        &key.kty,
        key.crv.as_deref(),
        key.usage.as_deref(),
        key.alg.as_deref(),
    );
    if algorithms.is_empty() {
        return None;
    }
    let decoding = match key.kty.as_str() {
        "RSA" => DecodingKey::from_rsa_components(key.n.as_deref()?, key.e.as_deref()?).ok()?,
        _ => DecodingKey::from_ec_components(key.x.as_deref()?, key.y.as_deref()?).ok()?,
    };
    Some((
        kid,
        VerifyingKey {
            algorithms,
            key: decoding,
        },
        published,
    ))
}

/// The algorithms a published key verifies: the one its `alg` names if Shoal accepts it and
/// it fits the key type, else (no `alg`, as in Entra ID's JWK set) every accepted algorithm of
/// its type and curve. Nothing for encryption keys, symmetric keys or unknown types.
fn accepted_algorithms(
    kty: &str,
    crv: Option<&str>,
    usage: Option<&str>,
    alg: Option<&str>,
) -> Vec<Algorithm> {
    if usage.is_some_and(|u| u != "sig") {
        return Vec::new();
    }
    let of_type: &[Algorithm] = match (kty, crv) {
        ("RSA", _) => &[Algorithm::RS256, Algorithm::RS384, Algorithm::RS512],
        ("EC", Some("P-256")) => &[Algorithm::ES256],
        ("EC", Some("P-384")) => &[Algorithm::ES384],
        _ => &[],
    };
    match alg {
        None => of_type.to_vec(),
        Some(alg) => alg
            .parse::<Algorithm>()
            .ok()
            .filter(|a| of_type.contains(a))
            .into_iter()
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Algorithm::*;

    #[test]
    fn a_key_verifies_only_what_its_jwk_allows() {
        let rsa = vec![RS256, RS384, RS512];
        // (kty, crv, use, alg) and what the key verifies.
        type Case = (
            &'static str,
            Option<&'static str>,
            Option<&'static str>,
            Option<&'static str>,
            Vec<Algorithm>,
        );
        let cases: &[Case] = &[
            // Entra ID publishes RSA keys without `alg`.
            ("RSA", None, Some("sig"), None, rsa.clone()),
            ("RSA", None, None, None, rsa.clone()),
            ("RSA", None, Some("sig"), Some("RS256"), vec![RS256]),
            ("RSA", None, None, Some("RS512"), vec![RS512]),
            // Not accepted, or not this key's type: the key is unusable, not widened.
            ("RSA", None, None, Some("PS256"), vec![]),
            ("RSA", None, None, Some("HS256"), vec![]),
            ("RSA", None, None, Some("ES256"), vec![]),
            ("RSA", None, None, Some("none"), vec![]),
            ("RSA", None, None, Some("RSA-OAEP"), vec![]),
            ("RSA", None, Some("enc"), None, vec![]),
            ("EC", Some("P-256"), None, None, vec![ES256]),
            ("EC", Some("P-256"), Some("sig"), Some("ES256"), vec![ES256]),
            ("EC", Some("P-384"), None, None, vec![ES384]),
            ("EC", Some("P-384"), None, Some("ES256"), vec![]),
            ("EC", Some("P-256"), None, Some("RS256"), vec![]),
            ("EC", Some("P-521"), None, None, vec![]),
            ("EC", None, None, Some("ES256"), vec![]),
            ("oct", None, None, None, vec![]),
            ("oct", None, None, Some("HS256"), vec![]),
            ("OKP", Some("Ed25519"), None, Some("EdDSA"), vec![]),
        ];
        for (kty, crv, usage, alg, expected) in cases {
            assert_eq!(
                &accepted_algorithms(kty, *crv, *usage, *alg),
                expected,
                "{kty} {crv:?} {usage:?} {alg:?}"
            );
        }
    }

    #[test]
    fn hmac_and_none_are_never_accepted() {
        for alg in [HS256, HS384, HS512, PS256, EdDSA] {
            assert!(!ACCEPTED.contains(&alg), "{alg:?}");
        }
    }

    #[test]
    fn keys_without_kid_or_material_are_skipped() {
        let rsa = serde_json::json!({"kty": "RSA", "kid": "k1", "n": "sXch", "e": "AQAB"});
        assert!(usable_key(rsa.clone()).is_some());
        let mut no_kid = rsa.clone();
        no_kid.as_object_mut().unwrap().remove("kid");
        assert!(usable_key(no_kid).is_none());
        let mut no_modulus = rsa;
        no_modulus.as_object_mut().unwrap().remove("n");
        assert!(usable_key(no_modulus).is_none());
        let secret = serde_json::json!({"kty": "oct", "kid": "k2", "k": "c2VjcmV0"});
        assert!(usable_key(secret).is_none());
        assert!(usable_key(serde_json::json!({"kid": "k3"})).is_none());
    }
}
