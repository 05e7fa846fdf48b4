//! Before a session exists: bad hellos refused with a reason, hellos past core's limits
//! (`docs/limits.md`) refused and one at every limit welcomed, a huge frame cut off at its
//! header, connections waiting for a hello capped.

use crate::support::{Server, WAIT};
use crate::{hello, next_json, open, timings, welcomed};
use axum::http::StatusCode;
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use std::time::Duration;
use tokio_tungstenite::tungstenite::Message;
use tunnel_agent::config::connect_url;
use tunnel_core::ErrorCode;
use tunnel_server::agents::Timings;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_hellos_are_refused_with_a_reason() {
    let (server, key, token) = Server::with_credential("3.4.1", timings()).await;
    let bad: Vec<(Message, ErrorCode)> = vec![
        (hello(&token, "3.4"), ErrorCode::InvalidHello),
        (Message::text("not json"), ErrorCode::InvalidHello),
        (
            Message::text(json!({"type": "ack", "command_id": 1}).to_string()),
            ErrorCode::InvalidHello,
        ),
        (Message::binary(b"\x00".to_vec()), ErrorCode::InvalidHello),
        (hello("", "3.4.0"), ErrorCode::AgentAuthFailed),
        (hello(&key, "3.4.0"), ErrorCode::AgentAuthFailed),
    ];
    for (message, code) in bad {
        let mut ws = open(&server).await;
        ws.send(message).await.unwrap();
        let refused = next_json(&mut ws).await;
        assert_eq!(refused["type"], "refused", "{refused}");
        assert_eq!(refused["error_code"], code.as_str(), "{refused}");
        assert!(refused["msg"].as_str().is_some_and(|m| !m.is_empty()));
    }
    // No hello at all within the hello timeout.
    let mut ws = open(&server).await;
    let refused = next_json(&mut ws).await;
    assert_eq!(
        refused["error_code"],
        ErrorCode::InvalidHello.as_str(),
        "{refused}"
    );
    assert!(server.session_ids(&key).await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hellos_past_the_core_limits_are_refused() {
    let (server, key, token) = Server::with_credential("3.4.1", timings()).await;
    let base = json!({
        "type": "hello", "authtoken": token, "agent_version": "3.4.0", "os": "linux",
        "metadata": "", "update_checks": true, "binds": []
    });
    let mut too_much_metadata = base.clone();
    too_much_metadata["metadata"] = json!("m".repeat(4097));
    let mut long_os = base.clone();
    long_os["os"] = json!("o".repeat(65));
    let mut many_binds = base.clone();
    many_binds["binds"] = json!(vec!["env=prod"; 101]);
    for (hello, needle) in [
        (too_much_metadata, "metadata"),
        (long_os, "os"),
        (many_binds, "binds"),
    ] {
        let mut ws = open(&server).await;
        ws.send(Message::text(hello.to_string())).await.unwrap();
        let refused = next_json(&mut ws).await;
        assert_eq!(
            refused["error_code"],
            ErrorCode::InvalidHello.as_str(),
            "{refused}"
        );
        assert!(
            refused["msg"].as_str().unwrap().contains(needle),
            "{refused}"
        );
    }
    assert!(server.session_ids(&key).await.is_empty());
}

/// A hello at every limit at once (4 KiB of metadata, 100 long binds: about 24 KiB, several times
/// what the server reads from a connection at a time) arrives whole and opens a session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hello_at_every_limit_is_welcomed() {
    let (server, key, token) = Server::with_credential("3.4.1", timings()).await;
    let label = "a".repeat(60);
    let binds: Vec<String> = (0..100)
        .map(|i| format!("b{i:03}{}.{label}.{label}.example.com", &label[4..]))
        .collect();
    let hello = json!({
        "type": "hello", "authtoken": token, "agent_version": "3.4.0", "os": "o".repeat(64),
        "metadata": "m".repeat(4096), "update_checks": true, "binds": binds
    })
    .to_string();
    assert!(hello.len() > 20_000, "{} bytes", hello.len());
    let mut ws = open(&server).await;
    ws.send(Message::text(hello)).await.unwrap();
    let welcome = next_json(&mut ws).await;
    assert_eq!(welcome["type"], "welcome", "{welcome}");
    assert_eq!(
        server.session_ids(&key).await,
        [welcome["session_id"].as_str().unwrap().to_owned()]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_frame_is_cut_off_at_its_header() {
    use tokio::io::AsyncWriteExt;
    // A hello timeout far beyond the wait below: only the frame bound can end this connection.
    let server = Server::start(
        "3.4.1",
        "local",
        Timings {
            hello_timeout: Duration::from_secs(600),
            ..timings()
        },
    )
    .await;
    let mut ws = open(&server).await;
    // The header of a masked binary frame announcing 10 MB, and a few bytes of it: a server
    // that accepted 16 MiB frames would sit waiting for the rest.
    let mut header = vec![0x82u8, 0x80 | 127];
    header.extend_from_slice(&10_000_000u64.to_be_bytes());
    header.extend_from_slice(&[1, 2, 3, 4, 0, 0, 0, 0]);
    let tokio_tungstenite::MaybeTlsStream::Plain(tcp) = ws.get_mut() else {
        panic!("plain TCP expected");
    };
    tcp.write_all(&header).await.unwrap();
    tcp.flush().await.unwrap();
    let ended = tokio::time::timeout(WAIT, async {
        loop {
            match ws.next().await {
                Some(Ok(Message::Text(text))) => {
                    let v: Value = serde_json::from_str(&text).unwrap();
                    assert_eq!(v["type"], "refused", "{v}");
                }
                Some(Ok(_)) => {}
                Some(Err(_)) | None => return,
            }
        }
    })
    .await;
    assert!(ended.is_ok(), "the server kept waiting for a 10 MB frame");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_waiting_for_a_hello_are_capped() {
    let (server, key, token) = Server::with_credential(
        "3.4.1",
        Timings {
            hello_timeout: Duration::from_secs(600),
            max_pending_hellos: 1,
            ..timings()
        },
    )
    .await;
    let mut waiting = open(&server).await;
    match tokio_tungstenite::connect_async(connect_url(&server.url()).unwrap()).await {
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
            assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
            let body: Value = serde_json::from_slice(response.body().as_deref().unwrap()).unwrap();
            assert_eq!(body["status_code"], 503, "{body}");
            assert_eq!(body["error_code"], "ERR_TUNNEL_161", "{body}");
            assert!(
                body["msg"].as_str().is_some_and(|m| !m.is_empty()),
                "{body}"
            );
        }
        other => panic!("expected a 503, got {other:?}"),
    }
    // Once the waiting connection said hello, its slot is free again.
    waiting.send(hello(&token, "3.4.0")).await.unwrap();
    assert_eq!(next_json(&mut waiting).await["type"], "welcome");
    let (_ws, second) = welcomed(&server, &token, "3.4.0").await;
    assert_eq!(server.session_ids(&key).await.len(), 2, "{second}");
}
