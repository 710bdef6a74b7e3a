//! The local stack `shoal dev` runs Shoal against, and the tests and benchmarks too: Azurite's
//! queue service, started in memory on a free port ([`azurite`]), over HTTPS with
//! `--oauth basic` when asked, with a local token endpoint that stands in for Entra ID (which
//! cannot run here). A regular dependency of the `shoal` binary, so the binary does not link
//! the test-support crate.

pub mod azurite;
pub mod tls;
