//! A throwaway certificate authority and a server certificate it signed for `127.0.0.1` and
//! `localhost`, for the local stack's HTTPS endpoints (Azurite with `--oauth basic`, the token
//! endpoint, the local Service Bus stand-in's management API). Clients trust the CA
//! (`ca_pem`), never the leaf directly.

use std::sync::Arc;

use anyhow::{Context, Result};
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

pub struct ThrowawayCa {
    /// The CA's certificate, for clients to trust.
    pub ca_pem: String,
    /// The server certificate followed by the CA's, so clients that know only the CA verify it.
    pub chain_pem: String,
    pub key_pem: String,
    leaf_der: CertificateDer<'static>,
    leaf_key_der: Vec<u8>,
    ca_der: CertificateDer<'static>,
    issuer: Issuer<'static, KeyPair>,
}

/// A client certificate the CA signed, and its key (PKCS#8), both PEM.
pub struct ClientCertificate {
    pub certificate_pem: String,
    pub key_pem: String,
}

impl ThrowawayCa {
    /// A new CA named `name` and a server certificate for `127.0.0.1` and `localhost`.
    pub fn generate(name: &str) -> Result<ThrowawayCa> {
        let ca_key = KeyPair::generate().context("cannot generate the CA key")?;
        let mut ca_params = CertificateParams::new(Vec::<String>::new())?;
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params.distinguished_name.push(DnType::CommonName, name);
        ca_params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let ca_cert = ca_params.self_signed(&ca_key)?;
        let ca_der = ca_cert.der().clone();
        let issuer = Issuer::new(ca_params, ca_key);

        let leaf_key = KeyPair::generate().context("cannot generate the server key")?;
        // `new` turns "127.0.0.1" into an IP address SAN.
        let mut leaf_params =
            CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()])?;
        leaf_params
            .distinguished_name
            .push(DnType::CommonName, "127.0.0.1");
        leaf_params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        let leaf_cert = leaf_params.signed_by(&leaf_key, &issuer)?;
        let ca_pem = ca_cert.pem();
        Ok(ThrowawayCa {
            chain_pem: format!("{}{}", leaf_cert.pem(), ca_pem),
            ca_pem,
            key_pem: leaf_key.serialize_pem(),
            leaf_der: leaf_cert.der().clone(),
            leaf_key_der: leaf_key.serialize_der(),
            ca_der,
            issuer,
        })
    }

    /// A client certificate for `name`, signed by the CA (for mutual TLS).
    pub fn client_certificate(&self, name: &str) -> Result<ClientCertificate> {
        let key = KeyPair::generate().context("cannot generate the client key")?;
        let mut params = CertificateParams::new(Vec::<String>::new())?;
        params.distinguished_name.push(DnType::CommonName, name);
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        let certificate = params.signed_by(&key, &self.issuer)?;
        Ok(ClientCertificate {
            certificate_pem: certificate.pem(),
            key_pem: key.serialize_pem(),
        })
    }

    /// A rustls server configuration presenting the server certificate and requiring a client
    /// certificate this CA signed (mutual TLS), with no ALPN.
    pub fn mutual_tls_server_config(&self) -> Result<Arc<rustls::ServerConfig>> {
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let mut roots = rustls::RootCertStore::empty();
        roots
            .add(self.ca_der.clone())
            .context("the generated CA was refused")?;
        let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
            Arc::new(roots),
            provider.clone(),
        )
        .build()
        .context("cannot build the client certificate verifier")?;
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()?
            .with_client_cert_verifier(verifier)
            .with_single_cert(
                vec![self.leaf_der.clone()],
                PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(self.leaf_key_der.clone())),
            )
            .context("the generated server certificate was refused")?;
        Ok(Arc::new(config))
    }

    /// A rustls server configuration presenting the server certificate, for HTTP/1.1.
    pub fn server_config(&self) -> Result<Arc<rustls::ServerConfig>> {
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()?
            .with_no_client_auth()
            .with_single_cert(
                vec![self.leaf_der.clone()],
                PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(self.leaf_key_der.clone())),
            )
            .context("the generated server certificate was refused")?;
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Arc::new(config))
    }
}
