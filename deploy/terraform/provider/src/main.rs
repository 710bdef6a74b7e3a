//! `terraform-provider-shoal`: Terraform starts this binary and speaks plugin protocol 6 to it
//! (the handshake and gRPC server come from `tf-provider`).

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> anyhow::Result<()> {
    // Both of rustls's crypto back-ends are compiled in (the workspace's aws-lc-rs, ring through
    // tf-provider's TLS stack), so rustls cannot pick one itself for the mTLS Terraform asks for.
    if rustls::crypto::aws_lc_rs::default_provider()
        .install_default()
        .is_err()
    {
        anyhow::bail!("a rustls crypto provider was already installed");
    }
    tf_provider::serve("shoal", terraform_provider_shoal::ShoalProvider::default()).await
}
