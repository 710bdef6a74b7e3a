//! Shutting down on a signal.

use tokio_util::sync::CancellationToken;

/// A token cancelled by SIGINT or SIGTERM.
pub fn shutdown_on_signal() -> CancellationToken {
    let token = CancellationToken::new();
    let fire = token.clone();
    tokio::spawn(async move {
        let ctrl_c = tokio::signal::ctrl_c();
        #[cfg(unix)]
        {
            let mut term =
                match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                    Ok(term) => term,
                    Err(err) => {
                        tracing::error!(error = %err, "cannot listen for SIGTERM");
                        let _ = ctrl_c.await;
                        fire.cancel();
                        return;
                    }
                };
            tokio::select! {
                _ = ctrl_c => tracing::info!("SIGINT received; shutting down"),
                _ = term.recv() => tracing::info!("SIGTERM received; shutting down"),
            }
        }
        #[cfg(not(unix))]
        {
            let _ = ctrl_c.await;
        }
        fire.cancel();
    });
    token
}
