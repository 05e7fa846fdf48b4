//! The HTTP side of a delivery: one signed `POST` of an event, made into the
//! [`DeliveryAttempt`] that is recorded of it. No redirect is followed (a redirect could lead
//! anywhere, past the address check; it is a failed attempt like any non-2xx), no proxy is used
//! (the address check is about where the server connects), and without
//! `--allow-private-webhooks` only public addresses are reached (`super::ssrf`).

use super::{sign, ssrf};
use std::time::{Duration, Instant};
use tunnel_core::resources::event_destination::DeliveryAttempt;

/// How much of a response body an attempt keeps.
const KEPT_BODY_BYTES: usize = 1024;
/// How long an idle connection to a receiver is kept for the next delivery.
const IDLE_CONNECTION: Duration = Duration::from_secs(4);

/// Sends webhooks; cheap to clone (one connection pool).
#[derive(Debug, Clone)]
pub struct Sender {
    client: reqwest::Client,
    allow_private: bool,
}

impl Sender {
    /// A sender giving up on a request after `timeout`.
    pub fn new(timeout: Duration, allow_private: bool) -> anyhow::Result<Sender> {
        let mut builder = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout)
            .redirect(reqwest::redirect::Policy::none())
            // Idle connections are dropped before receivers commonly close theirs (Node's
            // 5 s): a request sent on a connection the receiver is closing fails, as a
            // "connection closed before message completed" attempt and a needless retry.
            .pool_idle_timeout(IDLE_CONNECTION)
            .no_proxy()
            .user_agent(concat!(
                "tunnel-server/",
                env!("CARGO_PKG_VERSION"),
                " webhooks"
            ));
        if !allow_private {
            builder = builder.dns_resolver(std::sync::Arc::new(ssrf::PublicOnly));
        }
        Ok(Sender {
            client: builder.build()?,
            allow_private,
        })
    }

    /// POSTs `body` (an event's JSON) to `url`, signed with each of `secrets` as message
    /// `webhook_id`: the attempt, a success exactly when a 2xx answered.
    pub async fn post(
        &self,
        url: &str,
        webhook_id: &str,
        secrets: &[&str],
        body: Vec<u8>,
    ) -> DeliveryAttempt {
        let now = time::OffsetDateTime::now_utc();
        let started = Instant::now();
        let failed = |error: String, status_code: Option<u16>, response_body: Option<String>| {
            DeliveryAttempt {
                attempted_at: rfc3339_ms(now),
                status_code,
                latency_ms: elapsed_ms(started),
                error: Some(error),
                response_body,
            }
        };
        if !self.allow_private
            && let Err(why) = ssrf::check_literal(url)
        {
            return failed(why, None, None);
        }
        let timestamp = now.unix_timestamp();
        let response = self
            .client
            .post(url)
            .header("content-type", "application/json")
            .header("webhook-id", webhook_id)
            .header("webhook-timestamp", timestamp.to_string())
            .header(
                "webhook-signature",
                sign::signature_header(secrets, webhook_id, timestamp, &body),
            )
            .body(body)
            .send()
            .await;
        let mut response = match response {
            Ok(response) => response,
            Err(e) => return failed(describe(e), None, None),
        };
        let status = response.status();
        let mut kept = Vec::new();
        let mut read_error = None;
        while kept.len() < KEPT_BODY_BYTES {
            match response.chunk().await {
                Ok(Some(chunk)) => kept.extend_from_slice(&chunk),
                Ok(None) => break,
                Err(e) => {
                    read_error = Some(describe(e));
                    break;
                }
            }
        }
        kept.truncate(KEPT_BODY_BYTES);
        // Kept for display; NUL (which PostgreSQL cannot store) shown as U+FFFD like any byte
        // that is not text.
        let response_body = String::from_utf8_lossy(&kept).replace('\0', "\u{FFFD}");
        let error = if !status.is_success() {
            Some(format!("the receiver answered HTTP {}", status.as_u16()))
        } else {
            read_error.map(|e| format!("reading the answer failed: {e}"))
        };
        DeliveryAttempt {
            attempted_at: rfc3339_ms(now),
            status_code: Some(status.as_u16()),
            latency_ms: elapsed_ms(started),
            error,
            response_body: Some(response_body),
        }
    }
}

/// An HTTP error in words: what failed and why (the causes' chain), without the URL (which
/// may carry credentials).
fn describe(e: reqwest::Error) -> String {
    let what = if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "could not connect"
    } else if e.is_redirect() {
        "redirect refused"
    } else {
        "request failed"
    };
    let mut words = vec![what.to_owned()];
    let e = e.without_url();
    let mut source: Option<&dyn std::error::Error> = std::error::Error::source(&e);
    while let Some(cause) = source {
        let text = cause.to_string();
        if !words.iter().any(|w| w.contains(&text)) {
            words.push(text);
        }
        source = cause.source();
    }
    words.join(": ")
}

fn elapsed_ms(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// RFC 3339 in UTC to the millisecond, as attempts are shown.
pub fn rfc3339_ms(t: time::OffsetDateTime) -> String {
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second(),
        t.millisecond()
    )
}
