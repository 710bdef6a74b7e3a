//! The Storage Queue trigger's rules, as the Azure Functions queue listener applies them:
//! when to fetch the next batch, how long to wait between polls, what happens to a message
//! that failed or arrived already past `maxDequeueCount`, and how bodies are encoded.
//!
//! The worker owns the I/O; every decision it takes about a message comes from here.

use std::time::Duration;

pub use crate::binding_kinds::storage_queue::{
    NoPoisonQueue, POISON_SUFFIX, poison_queue_name, trigger_queue_name,
};
use crate::bindings::DataType;
use crate::host_config::{MessageEncoding, QueuesOptions};

mod polling;
#[cfg(test)]
mod tests;

pub use polling::{MINIMUM_POLLING_INTERVAL, PollingBackoff};

/// How long a received message stays invisible to other consumers while its handler runs, and
/// the period at which that invisibility is renewed (half of it), as Azure's listener does.
pub const INVISIBILITY: Duration = Duration::from_secs(600);

/// The renewal period for a given invisibility: half of it, so one missed renewal is survivable.
pub fn renewal_period(invisibility: Duration) -> Duration {
    invisibility / 2
}

/// Whether the listener may fetch another batch: only once in-flight work has dropped to
/// `newBatchThreshold`, so at most `batchSize + newBatchThreshold` messages are ever in flight.
pub fn may_fetch(in_flight: usize, options: &QueuesOptions) -> bool {
    in_flight <= options.new_batch_threshold as usize
}

/// The most messages one function's listener can have in flight on one instance.
pub fn max_in_flight(options: &QueuesOptions) -> usize {
    (options.batch_size + options.new_batch_threshold) as usize
}

/// What to do with a message as it arrives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrival {
    /// Hand it to the function.
    Process,
    /// Its dequeue count is already past `maxDequeueCount` (for instance a worker crashed on
    /// its last attempt): move it to the poison queue without invoking the function.
    Poison,
    /// Past `maxDequeueCount` on a queue without a poison queue: neither invoked nor moved,
    /// left invisible for the rest of the invisibility it was received with (Azure's
    /// `QueueProcessor.BeginProcessingMessageAsync` skips it and its poison step does nothing
    /// without a poison queue).
    LeaveInvisible,
}

/// `has_poison_queue`: whether [`poison_queue_name`] gave the trigger one.
pub fn on_arrival(dequeue_count: u32, options: &QueuesOptions, has_poison_queue: bool) -> Arrival {
    match (dequeue_count > options.max_dequeue_count, has_poison_queue) {
        (false, _) => Arrival::Process,
        (true, true) => Arrival::Poison,
        (true, false) => Arrival::LeaveInvisible,
    }
}

/// What to do with a message whose invocation failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AfterFailure {
    /// That was the last allowed attempt: copy it to the poison queue, then delete it.
    Poison,
    /// Make it visible again after this delay (`visibilityTimeout`).
    Release(Duration),
    /// A queue without a poison queue: leave the message invisible, so it comes back when its
    /// invisibility lapses rather than at once. Azure's `QueueProcessor.
    /// CompleteProcessingMessageAsync` does the same, "to prevent a fast infinite loop"
    /// (azure-sdk-for-net `Microsoft.Azure.WebJobs.Extensions.Storage.Common`
    /// `src/Shared/Queues/QueueProcessor.cs`).
    LeaveInvisible,
}

/// `has_poison_queue`: whether [`poison_queue_name`] gave the trigger one.
pub fn after_failure(
    dequeue_count: u32,
    options: &QueuesOptions,
    has_poison_queue: bool,
) -> AfterFailure {
    if !has_poison_queue {
        AfterFailure::LeaveInvisible
    } else if is_last_attempt(dequeue_count, options) {
        AfterFailure::Poison
    } else {
        AfterFailure::Release(options.visibility_timeout.as_duration())
    }
}

/// Whether a delivery with this dequeue count is the last `maxDequeueCount` allows: the next
/// receive of the same message would arrive past it.
pub fn is_last_attempt(dequeue_count: u32, options: &QueuesOptions) -> bool {
    dequeue_count >= options.max_dequeue_count
}

/// Why a message body could not be turned into what the handler receives.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("the message is not valid base64 (messageEncoding is base64)")]
    NotBase64,
}

/// The message's bytes under the app's `messageEncoding`. A body that is not base64 although
/// the encoding says so is a failed delivery: it is retried and ends in the poison queue with
/// its body intact, never dropped.
pub fn decode_body(raw: &str, encoding: MessageEncoding) -> Result<Vec<u8>, DecodeError> {
    match encoding {
        MessageEncoding::None => Ok(raw.as_bytes().to_vec()),
        MessageEncoding::Base64 => {
            use base64::Engine as _;
            base64::engine::general_purpose::STANDARD
                .decode(raw.trim())
                .map_err(|_| DecodeError::NotBase64)
        }
    }
}

/// What the handler receives as `Data.<trigger>` (and `Metadata.QueueTrigger`): the message
/// text when the binding takes text (`dataType` `string` or absent) and the bytes are UTF-8;
/// otherwise the bytes in base64. That is how the custom-handler protocol carries binary data:
/// Azure's host turns a `byte[]` input into `Convert.ToBase64String` for a non-binary binding
/// and passes it as `byte[]` for `dataType: binary`, which Json.NET writes as a base64 string
/// (azure-functions-host, `src/WebJobs.Script/Workers/ScriptInvocationContextExtensions.cs`,
/// `GetHttpScriptInvocationContextValue`). `stream` has no JSON form; its bytes go as binary.
/// Bytes that are not text are thus delivered, never failed into poison.
pub fn trigger_value(
    raw: &str,
    encoding: MessageEncoding,
    data_type: Option<DataType>,
) -> Result<String, DecodeError> {
    let bytes = decode_body(raw, encoding)?;
    let as_text = matches!(data_type, None | Some(DataType::String));
    if as_text {
        match String::from_utf8(bytes) {
            Ok(text) => Ok(text),
            Err(not_text) => Ok(base64_of(not_text.as_bytes())),
        }
    } else {
        Ok(base64_of(&bytes))
    }
}

fn base64_of(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The body to put on a queue for `text` under the app's `messageEncoding`.
pub fn encode_body(text: &str, encoding: MessageEncoding) -> String {
    match encoding {
        MessageEncoding::None => text.to_owned(),
        MessageEncoding::Base64 => base64_of(text.as_bytes()),
    }
}
