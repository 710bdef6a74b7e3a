//! Entity settings a Service Bus trigger may declare.
