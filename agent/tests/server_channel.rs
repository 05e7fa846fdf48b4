//! The server's side of the agent channel, driven by a hand-written WebSocket client that
//! behaves in ways the real agent never does: no acknowledgement (504), a bad or missing hello,
//! a peer that goes silent. Also checks what the server sends in its commands.

mod support;

use axum::http::StatusCode;
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use std::time::Duration;
use support::{Server, WAIT};
use tokio_tungstenite::tungstenite::Message;
use tunnel_agent::config::connect_url;
use tunnel_core::ErrorCode;
use tunnel_server::agents::Timings;

type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

fn timings() -> Timings {
    Timings {
        command_timeout: Duration::from_millis(700),
        heartbeat: Duration::from_millis(200),
        hello_timeout: Duration::from_millis(500),
    }
}

async fn open(server: &Server) -> Ws {
    tokio_tungstenite::connect_async(connect_url(&server.url()).unwrap())
        .await
        .unwrap()
        .0
}

fn hello(token: &str, version: &str) -> Message {
    let hello = json!({
        "type": "hello", "authtoken": token, "agent_version": version, "os": "linux",
        "metadata": "", "update_checks": true, "binds": []
    });
    Message::text(hello.to_string())
}

/// The next JSON text frame from the server (bounded wait).
async fn next_json(ws: &mut Ws) -> Value {
    loop {
        match tokio::time::timeout(WAIT, ws.next())
            .await
            .expect("no message in time")
        {
            Some(Ok(Message::Text(text))) => return serde_json::from_str(&text).unwrap(),
            Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue,
            other => panic!("expected a JSON message, got {other:?}"),
        }
    }
}

async fn welcomed(server: &Server, token: &str, version: &str) -> (Ws, String) {
    let mut ws = open(server).await;
    ws.send(hello(token, version)).await.unwrap();
    let welcome = next_json(&mut ws).await;
    assert_eq!(welcome["type"], "welcome", "{welcome}");
    let id = welcome["session_id"].as_str().unwrap().to_owned();
    (ws, id)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_that_does_not_answer_gets_a_504_and_acks_are_matched_by_id() {
    // Heartbeats slow enough that this client, which reads only when it expects a command, is
    // not taken for dead while it keeps the API waiting.
    let server = Server::start(
        "3.4.1,2.9.0",
        "local",
        Timings {
            heartbeat: Duration::from_secs(30),
            ..timings()
        },
    )
    .await;
    let key = server.account().await;
    let (_, token) = server.credential(&key, &[]).await;
    let (mut ws, id) = welcomed(&server, &token, "3.4.0").await;

    // No acknowledgement at all.
    let (answer, command) = tokio::join!(server.command(&id, "restart", &key), next_json(&mut ws));
    assert_eq!(command["type"], "command");
    assert_eq!(command["command"], "restart");
    let (status, body) = answer;
    assert_eq!(status, StatusCode::GATEWAY_TIMEOUT, "{body}");
    assert_eq!(body["error_code"], ErrorCode::AgentTimeout.as_str());

    // An acknowledgement of another command id does not answer this one.
    let reply = async {
        let command = next_json(&mut ws).await;
        let wrong = command["command_id"].as_u64().unwrap() + 100;
        ws.send(Message::text(
            json!({"type": "ack", "command_id": wrong}).to_string(),
        ))
        .await
        .unwrap();
        command
    };
    let ((status, _), command) = tokio::join!(server.command(&id, "stop", &key), reply);
    assert_eq!(command["command"], "stop");
    assert_eq!(status, StatusCode::GATEWAY_TIMEOUT);

    // The update command carries the target the server chose: the newest of the same major.
    let reply = async {
        let command = next_json(&mut ws).await;
        let ack = json!({"type": "ack", "command_id": command["command_id"], "refused": "update_in_progress"});
        ws.send(Message::text(ack.to_string())).await.unwrap();
        command
    };
    let ((status, body), command) = tokio::join!(server.command(&id, "update", &key), reply);
    assert_eq!(command["target_version"], "3.4.1");
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(body["error_code"], ErrorCode::UpdateInProgress.as_str());

    // None of this cost the session.
    assert_eq!(server.session_ids(&key).await, vec![id]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_peer_that_stops_answering_pings_loses_its_session() {
    let timings = Timings {
        heartbeat: Duration::from_millis(500),
        ..timings()
    };
    let server = Server::start("3.4.1", "local", timings).await;
    let key = server.account().await;
    let (_, token) = server.credential(&key, &[]).await;
    // The connection stays open, but the client no longer reads, so it answers no ping.
    let (_ws, id) = welcomed(&server, &token, "3.4.0").await;
    assert_eq!(server.session_ids(&key).await, vec![id.clone()]);
    server
        .wait_session_status(&id, &key, StatusCode::NOT_FOUND)
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_target_is_sent_when_nothing_newer_exists_in_the_major_version() {
    let server = Server::start("3.4.1,2.9.0", "local", timings()).await;
    let key = server.account().await;
    let (_, token) = server.credential(&key, &[]).await;
    for version in ["3.4.1", "4.0.0", "1.0.0"] {
        let (mut ws, id) = welcomed(&server, &token, version).await;
        let reply = async {
            let command = next_json(&mut ws).await;
            let ack = json!({"type": "ack", "command_id": command["command_id"], "refused": "no_update_available"});
            ws.send(Message::text(ack.to_string())).await.unwrap();
            command
        };
        let ((status, body), command) = tokio::join!(server.command(&id, "update", &key), reply);
        assert!(
            command.get("target_version").is_none(),
            "{version}: {command}"
        );
        assert_eq!(
            body["error_code"],
            ErrorCode::NoUpdateAvailable.as_str(),
            "{status}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_hellos_are_refused_with_a_reason() {
    let server = Server::start("3.4.1", "local", timings()).await;
    let key = server.account().await;
    let (_, token) = server.credential(&key, &[]).await;
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
async fn a_closed_connection_removes_the_session_at_once() {
    let server = Server::start(
        "3.4.1",
        "local",
        Timings {
            heartbeat: Duration::from_secs(30),
            ..timings()
        },
    )
    .await;
    let key = server.account().await;
    let (_, token) = server.credential(&key, &[]).await;
    let (mut ws, id) = welcomed(&server, &token, "3.4.0").await;
    assert_eq!(server.session_ids(&key).await, vec![id.clone()]);
    ws.close(None).await.unwrap();
    // Well before any heartbeat could have noticed.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while server.session_ids(&key).await.contains(&id) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "session still listed after close"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
