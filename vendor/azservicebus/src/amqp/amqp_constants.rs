//! Some constants taken from Microsoft.Azure.Amqp

// pub(crate) const APACHE: &str = "apache.org";
pub(crate) const VENDOR: &str = "com.microsoft";
// pub(crate) const SCHEME_AMQP: &str = "amqp";
// pub(crate) const SCHEME_AMQPS: &str = "amqps";
// pub(crate) const TIME_SPAN_NAME: &str = "com.microsoft:timespan";
// pub(crate) const URINAME: &str = "com.microsoft:uri";
// pub(crate) const DATE_TIME_OFFSET_NAME: &str = "com.microsoft:datetime-offset";
// pub(crate) const OPEN_ERROR_NAME: &str = "com.microsoft:open-error";
// pub(crate) const BADCOMMAND: &str = "BadCommand";
// pub(crate) const ADDRULE: &str = "AddRule";
// pub(crate) const DELETE_RULE: &str = "DeleteRule";
// pub(crate) const GETMESSAGE_SESSIONS: &str = "GetMessageSessions";
// pub(crate) const PUBLISH: &str = "Publish";
// pub(crate) const CONSUME: &str = "Consume";
// pub(crate) const DISPOSE: &str = "Dispose";

// pub(crate) const BATCHED_MESSAGE_FORMAT: SymbolRef =
//     SymbolRef("com.microsoft:batched-message-format");
// pub(crate) const SIMPLE_WEB_TOKEN_PROPERTY_NAME: SymbolRef = SymbolRef("com.microsoft:swt");
// pub(crate) const HOST_NAME: SymbolRef = SymbolRef("hostname");
// pub(crate) const NETWORK_HOST: SymbolRef = SymbolRef("network-host");
// pub(crate) const PORT: SymbolRef = SymbolRef("port");
// pub(crate) const ADDRESS: SymbolRef = SymbolRef("address");
// pub(crate) const PUBLISHER_ID: SymbolRef = SymbolRef("publisher-id");
// pub(crate) const IO_EVENT: SymbolRef = SymbolRef("io-event");

// pub(crate) static readonly ArraySegment<byte> NullBinary = default(ArraySegment<byte>);
// pub(crate) static readonly ArraySegment<byte> EmptyBinary = new ArraySegment<byte> (new byte[0]);
// pub(crate) static readonly AmqpVersion DefaultProtocolVersion = new AmqpVersion (1, 0, 0);

// pub(crate) static readonly DateTime StartOfEpoch = DateTime.Parse ("1970-01-01T00:00:00.0000000Z", CultureInfo.InvariantCulture).ToUniversalTime ();
// pub(crate) static readonly DateTime MaxAbsoluteExpiryTime;
// pub(crate) static readonly Accepted AcceptedOutcome;
// pub(crate) static readonly Released ReleasedOutcome;
// pub(crate) static readonly Rejected RejectedOutcome;
// pub(crate) static readonly Rejected RejectedNotFoundOutcome;
// pub(crate) static readonly Received ReceivedOutcome;

pub(crate) const AMQP_BATCHED_MESSAGE_FORMAT: u32 = 2147563264;
// pub(crate) const AMQP_MESSAGE_FORMAT: u32 = 0;
// pub(crate) const DEFAULT_PORT: i32 = 5672;
// pub(crate) const DEFAULT_SECURE_PORT: i32 = 5671;
// pub(crate) const PROTOCOL_HEADER_SIZE: i32 = 8;
// pub(crate) const TRANSPORT_BUFFER_SIZE: i32 = 8192;
// pub(crate) const MIN_MAX_FRAME_SIZE: i32 = 512;
pub(crate) const DEFAULT_MAX_FRAME_SIZE: u32 = 65536;
// pub(crate) const DEFAULT_MAX_CONCURRENT_CHANNELS: u16 = 8192;
// pub(crate) const DEFAULT_MAX_LINK_HANDLES: u32 = 262144;
// pub(crate) const DEFAULT_HEART_BEAT_INTERVAL: u32 = 90000;
// pub(crate) const MINIMUM_HEART_BEAT_INTERVAL_MS: u32 = 5000;
// pub(crate) const DEFAULT_WINDOW_SIZE: u32 = 5000;
// pub(crate) const DEFAULT_LINK_CREDIT: u32 = 1000;
// pub(crate) const DEFAULT_NEXT_TRANSFER_ID: u32 = 1;
// pub(crate) const SEGMENT_SIZE: i32 = 512;
// pub(crate) const AMQP_FORMAT: u8 = 1;

// // pub(crate) static readonly TimeSpan DefaultTimeout;
// pub(crate) const DEFAULT_WEBSOCKET_PORT: u16 = 443;
