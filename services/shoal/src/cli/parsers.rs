//! The flag values' parsers: each turns a flag's text into its value or a message that says
//! what was expected (clap adds the flag's name).

use std::time::Duration;

use shoal_store::crypto::SecretKey;

pub(super) fn parse_environment(text: &str) -> Result<String, String> {
    let text = text.trim();
    if text.is_empty() || text.chars().count() > 64 || text.chars().any(char::is_control) {
        return Err("must be 1-64 printable characters".into());
    }
    Ok(text.to_owned())
}

/// A bare host name or IP address: what goes between `sb://` and the port.
pub(super) fn parse_host(text: &str) -> Result<String, String> {
    match url::Host::parse(text) {
        Ok(url::Host::Domain(_)) | Ok(url::Host::Ipv4(_)) if !text.contains(':') => {
            Ok(text.to_owned())
        }
        _ => Err(format!(
            "`{text}` is not a host name or IPv4 address (no scheme, port or path)"
        )),
    }
}

pub(super) fn parse_worker_name(text: &str) -> Result<String, String> {
    let ok = !text.is_empty()
        && text.len() <= 128
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if ok {
        Ok(text.to_owned())
    } else {
        Err("must be 1-128 letters, digits, '.', '_' or '-'".into())
    }
}

pub(super) fn parse_breaker_tick(text: &str) -> Result<Duration, String> {
    let tick = parse_duration(text)?;
    if tick < Duration::from_millis(10) || tick > Duration::from_secs(60) {
        return Err(format!("{text}: must be between 10ms and 60s"));
    }
    Ok(tick)
}

pub(super) fn parse_millis(text: &str) -> Result<Duration, String> {
    match text.trim().parse::<u64>() {
        Ok(ms) if ms > 0 => Ok(Duration::from_millis(ms)),
        _ => Err("must be a positive number of milliseconds".into()),
    }
}

pub(super) fn parse_secret_key(text: &str) -> Result<SecretKey, String> {
    SecretKey::from_base64(text)
}

/// Parses `500ms`, `30s`, `15m`, `1h`, `1d` (or plain seconds) within (0, 24h].
/// A byte limit for `--max-message-bytes` and `--max-held-bytes`: 1 KiB to 1 GiB.
pub fn parse_byte_limit(text: &str) -> Result<u64, String> {
    match text.trim().parse::<u64>() {
        Ok(n) if (1024..=1 << 30).contains(&n) => Ok(n),
        _ => Err("must be a number of bytes from 1024 to 1073741824".into()),
    }
}

pub fn parse_ttl(text: &str) -> Result<Duration, String> {
    let ttl = parse_duration(text)?;
    if ttl.is_zero() || ttl > shoal_api::tokens::MAX_TTL {
        return Err("must be more than 0 and at most 24h".into());
    }
    Ok(ttl)
}

/// A rotation's grace: a duration like `--ttl`'s, from 0 to 7 days.
pub(super) fn parse_grace(text: &str) -> Result<Duration, String> {
    let grace = parse_duration(text)?;
    if grace > shoal_api::tokens::rotation::MAX_GRACE {
        return Err("must be at most 7d".into());
    }
    Ok(grace)
}

/// An absolute http(s) URL without query or fragment.
pub(super) fn parse_public_url(text: &str) -> Result<url::Url, String> {
    let url = url::Url::parse(text.trim()).map_err(|e| format!("`{text}` is not a URL: {e}"))?;
    if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
        return Err("must be an http:// or https:// URL with a host".into());
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err("must not have a query or fragment".into());
    }
    Ok(url)
}

/// The placeholder a trace viewer URL template must hold, as the dashboard replaces it.
const TRACE_ID_PLACEHOLDER: &str = "{traceId}";

/// A trace viewer's URL template (`--trace-viewer-url` / `SHOAL_TRACE_VIEWER_URL`): an absolute
/// http(s) URL holding `{traceId}`, anywhere (a Jaeger path, a Tempo query inside Grafana's
/// Explore state). Kept as written: the dashboard replaces the placeholder, so the URL is
/// checked with a sample id in its place, which also lets the template hold other braces
/// (Grafana's JSON state) without `url` escaping them.
///
/// Empty is no viewer (returned empty; `DashboardArgs::trace_viewer_url` drops it): Compose
/// and Helm pass an unset setting as an empty variable.
pub(super) fn parse_trace_viewer_url(text: &str) -> Result<String, String> {
    const NAMES: &str = "(--trace-viewer-url / SHOAL_TRACE_VIEWER_URL)";
    let text = text.trim();
    if text.is_empty() {
        return Ok(String::new());
    }
    if !text.contains(TRACE_ID_PLACEHOLDER) {
        return Err(format!(
            "must hold {TRACE_ID_PLACEHOLDER}, where the trace id goes, e.g. \
             http://jaeger:16686/trace/{TRACE_ID_PLACEHOLDER} {NAMES}"
        ));
    }
    let sample = text.replace(TRACE_ID_PLACEHOLDER, "4bf92f3577b34da6a3ce929d0e0e4736");
    let url = url::Url::parse(&sample).map_err(|e| format!("is not a URL: {e} {NAMES}"))?;
    if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
        return Err(format!(
            "must be an absolute http:// or https:// URL with a host {NAMES}"
        ));
    }
    Ok(text.to_owned())
}

pub(super) fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: u64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a duration like 15m or 1h"))?;
    Ok(match unit {
        "ms" => Duration::from_millis(number),
        "" | "s" => Duration::from_secs(number),
        "m" => Duration::from_secs(number.saturating_mul(60)),
        "h" => Duration::from_secs(number.saturating_mul(3600)),
        "d" => Duration::from_secs(number.saturating_mul(86_400)),
        _ => return Err(format!("unknown unit `{unit}` (use ms, s, m, h or d)")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_viewer_urls_are_absolute_http_templates_holding_the_trace_id() {
        let tempo = "https://grafana.example.com/explore?left=%7B%22datasource%22:%22tempo%22,\
                     %22queries%22:%5B%7B%22query%22:%22{traceId}%22%7D%5D%7D";
        let grafana_json =
            r#"https://grafana.example.com/explore?left={"queries":[{"query":"{traceId}"}]}"#;
        for good in [
            "http://jaeger.example:16686/trace/{traceId}",
            "https://jaeger.example.com/jaeger/trace/{traceId}?uiEmbed=v0",
            tempo,
            grafana_json,
            "http://127.0.0.1:16686/trace/{traceId}",
        ] {
            assert_eq!(parse_trace_viewer_url(good).as_deref(), Ok(good), "{good}");
        }
        assert_eq!(
            parse_trace_viewer_url("  http://j:16686/trace/{traceId}\n").as_deref(),
            Ok("http://j:16686/trace/{traceId}"),
            "kept as written, without the surrounding space"
        );
        assert_eq!(
            parse_trace_viewer_url(" ").as_deref(),
            Ok(""),
            "empty is none"
        );
        for (bad, says) in [
            ("http://jaeger.example:16686/trace/", "must hold {traceId}"),
            (
                "http://jaeger.example:16686/trace/{traceid}",
                "must hold {traceId}",
            ),
            (
                "http://jaeger.example:16686/trace/$traceId",
                "must hold {traceId}",
            ),
            ("/trace/{traceId}", "is not a URL"),
            ("jaeger.example/trace/{traceId}", "is not a URL"),
            ("ftp://jaeger.example/{traceId}", "http:// or https://"),
            ("javascript:alert('{traceId}')", "http:// or https://"),
            ("file:///trace/{traceId}", "http:// or https://"),
            ("http://[::1/trace/{traceId}", "is not a URL"),
        ] {
            let error = parse_trace_viewer_url(bad).expect_err(bad);
            assert!(error.contains(says), "{bad}: {error}");
            assert!(error.contains("SHOAL_TRACE_VIEWER_URL"), "{bad}: {error}");
        }
    }
}
