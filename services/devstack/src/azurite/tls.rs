//! The throwaway CA's files for Azurite (`--cert`/`--key`); the token endpoint keeps it in
//! memory.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Result;

use crate::tls::ThrowawayCa;

pub(crate) struct TestCa {
    pub(crate) ca_pem: String,
    pub(crate) ca_file: PathBuf,
    pub(crate) cert_file: PathBuf,
    pub(crate) key_file: PathBuf,
    ca: ThrowawayCa,
}

impl TestCa {
    pub(crate) fn generate(dir: &Path) -> Result<TestCa> {
        let ca = ThrowawayCa::generate("Shoal test CA")?;
        let ca_file = dir.join("ca.pem");
        let cert_file = dir.join("server.pem");
        let key_file = dir.join("server-key.pem");
        std::fs::write(&ca_file, &ca.ca_pem)?;
        std::fs::write(&cert_file, &ca.chain_pem)?;
        std::fs::write(&key_file, &ca.key_pem)?;
        Ok(TestCa {
            ca_pem: ca.ca_pem.clone(),
            ca_file,
            cert_file,
            key_file,
            ca,
        })
    }

    /// A rustls server configuration presenting the server certificate.
    pub(crate) fn server_config(&self) -> Result<Arc<rustls::ServerConfig>> {
        self.ca.server_config()
    }
}
