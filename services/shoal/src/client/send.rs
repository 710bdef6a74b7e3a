//! `shoal send FUNCTION --app A (--body TEXT | --file PATH | --json JSON)`: a test message on
//! the function's trigger queue or topic (`POST …/functions/{function}/send`), as the app.

use std::path::PathBuf;

use base64::Engine as _;
use clap::Args;
use serde_json::{Map, Value, json};
use shoal_client::routes;

use super::api::{Api, Call};
use super::failure::Failure;
use super::output::{self, Output, cell};

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("message").required(true).args(["body", "file", "json"])))]
pub struct SendArgs {
    /// The function whose trigger receives the message.
    pub function: String,
    #[arg(long, env = "SHOAL_APP")]
    pub app: String,
    /// The message as text, sent as is.
    #[arg(long, value_name = "TEXT")]
    pub body: Option<String>,
    /// The message from a file: its text, or its bytes (sent base64-encoded) when it is not
    /// UTF-8.
    #[arg(long, value_name = "PATH")]
    pub file: Option<PathBuf>,
    /// The message as JSON (checked here, sent compact).
    #[arg(long, value_name = "JSON")]
    pub json: Option<String>,
    /// Service Bus: the message's session (required when the trigger reads sessions).
    #[arg(long, value_name = "ID")]
    pub session_id: Option<String>,
    /// Kafka / Event Hubs: the record's key.
    #[arg(long, value_name = "KEY")]
    pub key: Option<String>,
    /// A Service Bus application property, or a Kafka / Event Hubs / RabbitMQ header;
    /// repeatable.
    #[arg(long = "property", value_name = "NAME=VALUE")]
    pub properties: Vec<String>,
}

/// The request body the API takes, from the flags.
fn request(args: &SendArgs) -> Result<Value, Failure> {
    let mut body = Map::new();
    if let Some(text) = &args.body {
        body.insert("body".into(), json!(text));
    }
    if let Some(text) = &args.json {
        let value: Value = serde_json::from_str(text)
            .map_err(|e| Failure::usage(format!("--json is not valid JSON: {e}")))?;
        body.insert("body".into(), value);
    }
    if let Some(path) = &args.file {
        let bytes = std::fs::read(path)
            .map_err(|e| Failure::usage(format!("--file {}: {e}", path.display())))?;
        match String::from_utf8(bytes) {
            Ok(text) => body.insert("body".into(), json!(text)),
            Err(binary) => body.insert(
                "bodyBase64".into(),
                json!(base64::engine::general_purpose::STANDARD.encode(binary.as_bytes())),
            ),
        };
    }
    if let Some(session) = &args.session_id {
        body.insert("sessionId".into(), json!(session));
    }
    if let Some(key) = &args.key {
        body.insert("key".into(), json!(key));
    }
    if !args.properties.is_empty() {
        let mut properties = Map::new();
        for pair in &args.properties {
            let Some((name, value)) = pair.split_once('=').filter(|(n, _)| !n.is_empty()) else {
                return Err(Failure::usage(format!(
                    "--property {pair}: expected NAME=VALUE"
                )));
            };
            properties.insert(name.to_owned(), json!(value));
        }
        body.insert("properties".into(), Value::Object(properties));
    }
    Ok(Value::Object(body))
}

pub async fn send(api: &Api, output: Output, args: SendArgs) -> Result<(), Failure> {
    let body = request(&args)?;
    let call = Call::new(
        routes::SEND,
        &[api.tenant.as_str(), &args.app, &args.function],
    )
    .body(body);
    let sent = api.send(call).await?.body;
    match output {
        Output::Json => output::json(&sent),
        Output::Table => println!(
            "Sent {} bytes to {} ({} of function {}); message id {}.",
            cell(&sent, "/size"),
            cell(&sent, "/destination"),
            cell(&sent, "/trigger"),
            args.function,
            cell(&sent, "/messageId"),
        ),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(extra: impl FnOnce(&mut SendArgs)) -> SendArgs {
        let mut args = SendArgs {
            function: "f".into(),
            app: "a".into(),
            body: None,
            file: None,
            json: None,
            session_id: None,
            key: None,
            properties: Vec::new(),
        };
        extra(&mut args);
        args
    }

    #[test]
    fn the_flags_become_the_api_request() {
        let sent = request(&args(|a| {
            a.json = Some(r#"{"id": 1}"#.into());
            a.session_id = Some("s".into());
            a.properties = vec!["trace=t=1".into(), "empty=".into()];
        }))
        .unwrap();
        assert_eq!(
            sent,
            json!({"body": {"id": 1}, "sessionId": "s", "properties": {"trace": "t=1", "empty": ""}})
        );
        let text = request(&args(|a| a.body = Some("hi".into()))).unwrap();
        assert_eq!(text, json!({"body": "hi"}));
    }

    #[test]
    fn bad_flags_are_usage_errors_naming_the_flag() {
        let cases = [
            (args(|a| a.json = Some("{".into())), "--json"),
            (
                args(|a| {
                    a.body = Some("x".into());
                    a.properties = vec!["novalue".into()];
                }),
                "--property novalue",
            ),
            (
                args(|a| a.file = Some("/nonexistent/message.json".into())),
                "--file /nonexistent/message.json",
            ),
        ];
        for (args, flag) in cases {
            let failure = request(&args).unwrap_err();
            assert_eq!(failure.code, super::super::failure::USAGE);
            assert!(failure.message.contains(flag), "{}", failure.message);
        }
    }
}
