//! Just enough of the Kafka protocol to refuse a CreateTopics request: its header and topic
//! names (versions 0 to 4, the ones librdkafka sends; later versions are passed on), and the
//! response that refuses them.

/// CreateTopics' and ApiVersions' API keys.
const CREATE_TOPICS: i16 = 19;
const API_VERSIONS: i16 = 18;
/// The newest CreateTopics version without flexible (tagged) fields.
const LAST_RIGID_VERSION: i16 = 4;
/// `TOPIC_AUTHORIZATION_FAILED`.
const TOPIC_AUTHORIZATION_FAILED: i16 = 29;
const REFUSAL: &str = "this client may not create topics";

/// A refused CreateTopics request.
pub struct Refusal {
    pub correlation_id: i32,
    /// The response the client gets.
    pub response: Vec<u8>,
    /// What goes to the broker instead, so that its answer takes the refusal's place in order.
    pub stand_in: Vec<u8>,
}

/// The refusal of `request` when it is a CreateTopics request naming a topic `refused` says
/// yes to; `None` for anything else (or anything this cannot read).
pub fn refuse_create_topics(request: &[u8], refused: impl Fn(&str) -> bool) -> Option<Refusal> {
    let mut r = Reader(request);
    let api_key = r.i16()?;
    let version = r.i16()?;
    if api_key != CREATE_TOPICS || !(0..=LAST_RIGID_VERSION).contains(&version) {
        return None;
    }
    let correlation_id = r.i32()?;
    r.nullable_string()?; // client id
    let header_len = request.len() - r.0.len();
    let mut names = Vec::new();
    for _ in 0..r.count()? {
        names.push(r.string()?.to_owned());
        r.i32()?; // partitions
        r.i16()?; // replication factor
        for _ in 0..r.count()? {
            r.i32()?; // partition
            for _ in 0..r.count()? {
                r.i32()?; // broker id
            }
        }
        for _ in 0..r.count()? {
            r.string()?;
            r.nullable_string()?;
        }
    }
    if !names.iter().any(|name| refused(name)) {
        return None;
    }
    let mut response = correlation_id.to_be_bytes().to_vec();
    if version >= 2 {
        response.extend(0i32.to_be_bytes()); // throttle time
    }
    response.extend(i32::try_from(names.len()).ok()?.to_be_bytes());
    for name in &names {
        put_string(&mut response, name);
        response.extend(TOPIC_AUTHORIZATION_FAILED.to_be_bytes());
        if version >= 1 {
            put_string(&mut response, REFUSAL);
        }
    }
    // ApiVersions v0 with the same header: no body.
    let mut stand_in = API_VERSIONS.to_be_bytes().to_vec();
    stand_in.extend(0i16.to_be_bytes());
    stand_in.extend(&request[4..header_len]);
    Some(Refusal {
        correlation_id,
        response,
        stand_in,
    })
}

/// A response's correlation id (its first four bytes).
pub fn correlation_id(response: &[u8]) -> Option<i32> {
    Reader(response).i32()
}

fn put_string(out: &mut Vec<u8>, text: &str) {
    out.extend(i16::try_from(text.len()).unwrap_or(i16::MAX).to_be_bytes());
    out.extend(text.as_bytes());
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (taken, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(taken)
    }

    fn i16(&mut self) -> Option<i16> {
        Some(i16::from_be_bytes(self.take(2)?.try_into().ok()?))
    }

    fn i32(&mut self) -> Option<i32> {
        Some(i32::from_be_bytes(self.take(4)?.try_into().ok()?))
    }

    /// An array's length (-1, null, counts as none).
    fn count(&mut self) -> Option<usize> {
        usize::try_from(self.i32()?.max(0)).ok()
    }

    fn string(&mut self) -> Option<&'a str> {
        let len = usize::try_from(self.i16()?).ok()?;
        std::str::from_utf8(self.take(len)?).ok()
    }

    fn nullable_string(&mut self) -> Option<Option<&'a str>> {
        let len = self.i16()?;
        if len < 0 {
            return Some(None);
        }
        let len = usize::try_from(len).ok()?;
        Some(Some(std::str::from_utf8(self.take(len)?).ok()?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A CreateTopics v4 request for `topics` (3 partitions, one config each).
    fn request(version: i16, topics: &[&str]) -> Vec<u8> {
        let mut out = CREATE_TOPICS.to_be_bytes().to_vec();
        out.extend(version.to_be_bytes());
        out.extend(7i32.to_be_bytes());
        put_string(&mut out, "rdkafka");
        out.extend(i32::try_from(topics.len()).unwrap().to_be_bytes());
        for topic in topics {
            put_string(&mut out, topic);
            out.extend(3i32.to_be_bytes());
            out.extend((-1i16).to_be_bytes());
            out.extend(0i32.to_be_bytes());
            out.extend(1i32.to_be_bytes());
            put_string(&mut out, "retention.ms");
            out.extend((-1i16).to_be_bytes());
        }
        out.extend(30_000i32.to_be_bytes());
        out.push(0);
        out
    }

    #[test]
    fn a_request_for_a_refused_topic_is_refused_in_order_and_others_pass() {
        let req = request(4, &["orders-poison"]);
        let refusal = refuse_create_topics(&req, |t| t == "orders-poison").expect("refused");
        assert_eq!(refusal.correlation_id, 7);
        let mut want = 7i32.to_be_bytes().to_vec();
        want.extend(0i32.to_be_bytes());
        want.extend(1i32.to_be_bytes());
        put_string(&mut want, "orders-poison");
        want.extend(29i16.to_be_bytes());
        put_string(&mut want, REFUSAL);
        assert_eq!(refusal.response, want);
        let mut stand_in = vec![0, 18, 0, 0, 0, 0, 0, 7];
        put_string(&mut stand_in, "rdkafka");
        assert_eq!(refusal.stand_in, stand_in);

        assert!(refuse_create_topics(&request(4, &["orders"]), |t| t == "orders-poison").is_none());
        assert!(refuse_create_topics(&request(5, &["orders-poison"]), |_| true).is_none());
        assert!(
            refuse_create_topics(&req[..20], |_| true).is_none(),
            "cut short"
        );
        let v0 = refuse_create_topics(&request(0, &["a", "b"]), |t| t == "b").expect("refused");
        assert_eq!(v0.response.len(), 4 + 4 + (2 + 1 + 2) * 2);
    }
}
