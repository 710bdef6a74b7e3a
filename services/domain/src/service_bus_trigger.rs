//! What the Service Bus trigger hands a handler and reads back from it.
