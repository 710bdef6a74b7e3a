//! Message expiry as Service Bus defines it (reference document 001).
