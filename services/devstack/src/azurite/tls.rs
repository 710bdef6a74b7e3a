//! A throwaway certificate authority and a server certificate it signed for `127.0.0.1` and
//! `localhost`, written as PEM files for Azurite (`--cert`/`--key`) and kept in memory for the
//! token endpoint. Clients trust the CA (`ca_pem`), never the leaf directly.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

pub(crate) struct TestCa {
    pub(crate) ca_pem: String,
    pub(crate) ca_file: PathBuf,
    pub(crate) cert_file: PathBuf,
    pub(crate) key_file: PathBuf,
    leaf_der: CertificateDer<'static>,
    leaf_key_der: Vec<u8>,
}

impl TestCa {
    pub(crate) fn generate(dir: &Path) -> Result<TestCa> {
        let ca_key = KeyPair::generate().context("cannot generate the test CA key")?;
        let mut ca_params = CertificateParams::new(Vec::<String>::new())?;
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(DnType::CommonName, "Shoal test CA");
        ca_params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let ca_cert = ca_params.self_signed(&ca_key)?;
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
        let ca_file = dir.join("ca.pem");
        let cert_file = dir.join("server.pem");
        let key_file = dir.join("server-key.pem");
        std::fs::write(&ca_file, &ca_pem)?;
        // The chain, so clients that only know the CA can verify the leaf.
        std::fs::write(&cert_file, format!("{}{}", leaf_cert.pem(), ca_pem))?;
        std::fs::write(&key_file, leaf_key.serialize_pem())?;
        Ok(TestCa {
            ca_pem,
            ca_file,
            cert_file,
            key_file,
            leaf_der: leaf_cert.der().clone(),
            leaf_key_der: leaf_key.serialize_der(),
        })
    }

    /// A rustls server configuration presenting the server certificate.
    pub(crate) fn server_config(&self) -> Result<Arc<rustls::ServerConfig>> {
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
