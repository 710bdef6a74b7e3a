//! Rule manager for Service Bus subscriptions.

cfg_either_rustls_or_native_tls! {
    pub mod service_bus_rule_manager;
}

