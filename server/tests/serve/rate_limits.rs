//! The rate limits over a real socket (the per-IP limits need the peer address, which only a
//! served listener has): the 429's code, `Retry-After`, `RateLimit-*` headers and body, per API
//! key, per address, after failed authentications, and for agent connections
//! (docs/rate-limits.md).

use crate::api_headers;
use crate::common::process::{agent_handshake, http};
use serde_json::Value;
use std::net::SocketAddr;
use tunnel_server::ratelimit::{Rate, Settings};

/// An in-process server on a free loopback port with `limits`, and a new account's API key.
async fn serve(limits: Settings) -> (SocketAddr, String) {
    let (addr, state, _) =
        crate::on_socket(|config| config.rate_limits = limits, tunnel_server::app).await;
    let created = state
        .store
        .create_account("limited", "admin")
        .await
        .unwrap();
    (addr, created.api_key)
}

fn rate(text: &str) -> Option<Rate> {
    Rate::parse(text).unwrap()
}

/// A header's value in a response head (hyper writes names in lower case).
fn header(head: &str, name: &str) -> Option<String> {
    head.lines().find_map(|line| {
        let (n, v) = line.split_once(':')?;
        n.trim()
            .eq_ignore_ascii_case(name)
            .then(|| v.trim().to_owned())
    })
}

fn get(addr: SocketAddr, path: &str, key: &str) -> (u16, String, String) {
    let auth = format!("Bearer {key}");
    http(addr, "GET", path, &api_headers(&auth)[..2], "")
}

/// Checks a 429: its code, `details.limit`, and `Retry-After` equal to the body's seconds.
fn assert_refused(response: &(u16, String, String), code: &str, limit: &str) -> u64 {
    let (status, head, body) = response;
    assert_eq!(*status, 429, "{head}\n{body}");
    let body: Value = serde_json::from_str(body).unwrap();
    assert_eq!(body["error_code"], code, "{body}");
    assert_eq!(body["status_code"], 429);
    assert_eq!(body["details"]["limit"], limit, "{body}");
    let secs = body["details"]["retry_after_secs"].as_u64().unwrap();
    assert!(secs >= 1, "{body}");
    assert_eq!(
        header(head, "retry-after"),
        Some(secs.to_string()),
        "{head}"
    );
    assert!(header(head, "operation-id").is_some(), "{head}");
    assert_eq!(header(head, "ratelimit-remaining").as_deref(), Some("0"));
    secs
}

#[tokio::test]
async fn each_api_key_has_a_bucket_and_a_refused_request_changes_nothing() {
    let (addr, key) = serve(Settings {
        per_key: rate("1/m,3"),
        ..Settings::off()
    })
    .await;
    tokio::task::spawn_blocking(move || {
        let auth = format!("Bearer {key}");
        // The first of the key's three requests makes a second key of the same account.
        let (status, head, body) = http(addr, "POST", "/api/api_keys", &api_headers(&auth), "{}");
        assert_eq!(status, 201, "{body}");
        let mut remaining = vec![header(&head, "ratelimit-remaining").unwrap()];
        let other: Value = serde_json::from_str(&body).unwrap();
        let other = other["token"].as_str().unwrap().to_owned();
        for _ in 0..2 {
            let (status, head, body) = get(addr, "/api/credentials", &key);
            assert_eq!(status, 200, "{body}");
            assert_eq!(header(&head, "ratelimit-limit").as_deref(), Some("3"));
            remaining.push(header(&head, "ratelimit-remaining").unwrap());
            let reset: u64 = header(&head, "ratelimit-reset").unwrap().parse().unwrap();
            assert!(reset <= 180, "{head}");
        }
        assert_eq!(remaining, ["2", "1", "0"]);

        // A create over the limit is refused before anything is written.
        let refused = http(
            addr,
            "POST",
            "/api/credentials",
            &api_headers(&auth),
            r#"{"description":"over the limit"}"#,
        );
        let secs = assert_refused(&refused, "ERR_TUNNEL_170", "api_key");
        assert!((50..=60).contains(&secs), "one request a minute: {secs}");
        assert_eq!(header(&refused.1, "ratelimit-limit").as_deref(), Some("3"));

        // Another key has its own bucket, and shows that the refused create wrote nothing.
        let (status, head, body) = get(addr, "/api/credentials", &other);
        assert_eq!(status, 200, "{body}");
        assert_eq!(header(&head, "ratelimit-remaining").as_deref(), Some("2"));
        let listed: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(listed["credentials"], serde_json::json!([]), "{body}");
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn unknown_keys_lock_the_address_out_even_for_a_right_key() {
    let (addr, key) = serve(Settings {
        auth_failures: rate("1/m,3"),
        ..Settings::off()
    })
    .await;
    tokio::task::spawn_blocking(move || {
        // The bucket's three failures, answered 401; the third empties it.
        for guess in 0..3 {
            let (status, _, body) = get(addr, "/api/credentials", &format!("ak_guess{guess}"));
            assert_eq!(status, 401, "{body}");
        }
        // From then on every key is refused without being looked at, the right one too.
        let refused = get(addr, "/api/credentials", &key);
        let secs = assert_refused(&refused, "ERR_TUNNEL_171", "auth_failures");
        assert!(secs <= 60, "{secs}");
        let refused = get(addr, "/api/credentials", "ak_guess5");
        assert_refused(&refused, "ERR_TUNNEL_171", "auth_failures");
        // A request with no key still learns what the API wants.
        let (status, _, body) = http(
            addr,
            "GET",
            "/api/credentials",
            &[("Service-Version", "2")],
            "",
        );
        assert_eq!(status, 401, "{body}");
        assert!(body.contains("ERR_TUNNEL_102"), "{body}");
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn each_address_has_a_bucket_whatever_the_key() {
    let (addr, key) = serve(Settings {
        per_ip: rate("1/m,4"),
        ..Settings::off()
    })
    .await;
    tokio::task::spawn_blocking(move || {
        for _ in 0..2 {
            assert_eq!(get(addr, "/api/credentials", &key).0, 200);
        }
        // Unknown keys and missing ones count against the address too.
        assert_eq!(get(addr, "/api/credentials", "ak_nobody").0, 401);
        assert_eq!(http(addr, "GET", "/api/credentials", &[], "").0, 400);
        assert_refused(&get(addr, "/api/credentials", &key), "ERR_TUNNEL_170", "ip");
    })
    .await
    .unwrap();
}

/// The start of a WebSocket handshake on the agent channel; the status of the answer.
fn agent_connect(addr: SocketAddr) -> (u16, String) {
    let (_, head) = agent_handshake(addr);
    let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    (status, head)
}

#[tokio::test]
async fn agent_connections_are_paced_per_address() {
    let (addr, _key) = serve(Settings {
        agent_connects: rate("1/m,2"),
        ..Settings::off()
    })
    .await;
    tokio::task::spawn_blocking(move || {
        for _ in 0..2 {
            let (status, head) = agent_connect(addr);
            assert_eq!(status, 101, "{head}");
        }
        let (status, head) = agent_connect(addr);
        assert_eq!(status, 429, "{head}");
        let wait: u64 = header(&head, "retry-after").unwrap().parse().unwrap();
        assert!((1..=60).contains(&wait), "{head}");
    })
    .await
    .unwrap();
}
