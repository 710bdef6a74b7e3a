//! A Service Bus entity (queue, topic, subscription) as Shoal reasons about it: when a message
//! expires ([`expiry`], reference document 001) and the entity settings a function may declare,
//! validated on write and compared with the live entity ([`settings`]).

pub mod expiry;
pub mod path;
pub mod settings;
