//! What the stream triggers — `kafkaTrigger`, and `eventHubTrigger` read through Event Hubs'
//! Kafka endpoint — need without I/O:
//!
//! * [`source`]: the topic, consumer group and client properties a trigger reads with, its
//!   `%Setting%` references and connection resolved from the app's settings, and how it
//!   batches (`cardinality`, batch size, where a partition without a checkpoint starts);
//! * [`payload`]: the request body — the event (or, with `cardinality: many`, the events) in
//!   `Data` and the binding data Azure Functions passes in `Metadata`;
//! * [`batch_outcome`]: which events of a batch the handler reported failed
//!   (`batchItemFailures`), so only those are retried and dead-lettered;
//! * [`checkpoint`]: which offsets a finished batch commits, per partition, and how often
//!   (Event Hubs' `batchCheckpointFrequency`);
//! * [`dead_letter`]: where events whose final attempt failed go before the checkpoint moves
//!   past them (`deadLetter`, a Shoal extension of `function.json`), and the record written
//!   there;
//! * [`retry_topic`]: an event whose next retry is far off, parked on the trigger's retry topic
//!   with its due time and where its retries stand;
//! * [`replay`]: a dead letter written back to the trigger's topic, keeping its key and
//!   headers and marked as replayed;
//! * [`output`]: the records a `kafka` or `eventHub` output binding's value stands for (the
//!   target itself is resolved by [`source::stream_output`]).
//!
//! The checkpoint rule is the reference document's (`004`, reliable event processing): the
//! pointer of a partition moves forward after each batch, whether the function succeeded or
//! failed; it does not move when the host dies mid-batch, so the batch is read again; a retry
//! policy delays it until the policy is exhausted. Shoal adds what the document asks of a
//! careful consumer: a batch whose final attempt failed is written to a dead-letter target
//! first, and the pointer moves only once that write succeeded, so nothing is dropped.

pub mod batch_outcome;
pub mod checkpoint;
pub mod dead_letter;
pub mod output;
pub mod payload;
pub mod replay;
pub mod retry_topic;
pub mod source;

pub use checkpoint::{Checkpoints, next_offsets};
pub use dead_letter::{
    DeadLetter, DeadLetterTarget, Failure, dead_letter_headers, dead_letter_message, default_target,
};
pub use output::{StreamRecord, stream_output_records};
pub use payload::{StreamEvent, StreamInvocation, batch_payload, single_payload};
pub use source::{
    StartFrom, StreamKind, StreamSource, StreamTarget, stream_client, stream_output, stream_source,
};
