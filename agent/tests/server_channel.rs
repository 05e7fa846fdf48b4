//! The server's side of the agent channel, driven by a hand-written WebSocket client that
//! behaves in ways the real agent never does: no acknowledgement (504), a bad or missing hello,
//! a peer that goes silent. Also checks what the server sends in its commands.

mod support;

use axum::http::{Method, StatusCode};
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use std::time::Duration;
use support::{Server, WAIT};
use tokio_tungstenite::tungstenite::Message;
use tunnel_agent::config::connect_url;
use tunnel_core::ErrorCode;
use tunnel_core::resources::tunnel_session::AgentCommand;
use tunnel_server::agents::Timings;
use tunnel_server::agents::registry::CommandError;

type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

fn timings() -> Timings {
    Timings {
        command_timeout: Duration::from_millis(700),
        heartbeat: Duration::from_millis(200),
        hello_timeout: Duration::from_millis(500),
        ..Timings::default()
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

/// Acknowledges the next command as accepted; returns it.
async fn accept_next(ws: &mut Ws) -> Value {
    let command = next_json(ws).await;
    let ack = json!({"type": "ack", "command_id": command["command_id"]});
    ws.send(Message::text(ack.to_string())).await.unwrap();
    command
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn of_two_concurrent_stops_one_is_accepted_and_the_other_finds_no_session() {
    // A long command timeout: the losing stop must not wait for it (a 504), it must learn at
    // once that the session is going away (404).
    let server = Server::start(
        "3.4.1",
        "local",
        Timings {
            command_timeout: Duration::from_secs(60),
            heartbeat: Duration::from_secs(30),
            ..timings()
        },
    )
    .await;
    let key = server.account().await;
    let (_, token) = server.credential(&key, &[]).await;
    let (mut ws, id) = welcomed(&server, &token, "3.4.0").await;

    // The agent sees both stops before it answers, accepts the first and says nothing more
    // (it is leaving; it never answers the second).
    let agent = async {
        let first = accept_next(&mut ws).await;
        let second = next_json(&mut ws).await;
        (first, second)
    };
    let both = async {
        tokio::join!(
            server.command(&id, "stop", &key),
            server.command(&id, "stop", &key)
        )
    };
    let (((a, body_a), (b, body_b)), (first, second)) =
        tokio::time::timeout(WAIT, async { tokio::join!(both, agent) })
            .await
            .expect("both stops answered in time");
    assert_eq!(first["command"], "stop");
    assert_eq!(second["command"], "stop");
    let mut statuses = [a, b];
    statuses.sort();
    assert_eq!(
        statuses,
        [StatusCode::NO_CONTENT, StatusCode::NOT_FOUND],
        "{body_a} {body_b}"
    );
    let lost = if a == StatusCode::NOT_FOUND {
        body_a
    } else {
        body_b
    };
    assert_eq!(lost["error_code"], ErrorCode::NotFound.as_str(), "{lost}");
    assert!(lost["msg"].as_str().unwrap().contains("ended"), "{lost}");

    // And a command after the accepted stop finds nothing either.
    let (status, _) = server.command(&id, "update", &key).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_lost_during_a_command_is_a_404_not_a_timeout() {
    let server = Server::start(
        "3.4.1",
        "local",
        Timings {
            command_timeout: Duration::from_secs(60),
            heartbeat: Duration::from_secs(30),
            ..timings()
        },
    )
    .await;
    let key = server.account().await;
    let (_, token) = server.credential(&key, &[]).await;
    let (mut ws, id) = welcomed(&server, &token, "3.4.0").await;
    let agent = async {
        let command = next_json(&mut ws).await;
        ws.close(None).await.unwrap();
        command
    };
    let ((status, body), command) = tokio::time::timeout(WAIT, async {
        tokio::join!(server.command(&id, "restart", &key), agent)
    })
    .await
    .expect("answered in time");
    assert_eq!(command["command"], "restart");
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert!(body["msg"].as_str().unwrap().contains("ended"), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_id_must_be_the_path_id() {
    let server = Server::start("3.4.1", "local", timings()).await;
    let key = server.account().await;
    let (_, token) = server.credential(&key, &[]).await;
    let (mut ws, id) = welcomed(&server, &token, "3.4.0").await;
    for command in ["restart", "stop", "update"] {
        let path = format!("/tunnel_sessions/{id}/{command}");
        let other = json!({"id": "ts_someoneelse"}).to_string();
        let (status, body) = server.call(Method::POST, &path, &key, Some(&other)).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert_eq!(
            body["error_code"],
            ErrorCode::InvalidField.as_str(),
            "{body}"
        );
        assert_eq!(body["details"]["field"], "id", "{body}");
        let (status, body) = server
            .call(Method::POST, &path, &key, Some(r#"{"nope": 1}"#))
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    }
    // The same id is accepted and ignored: the command reaches the agent.
    let same = json!({"id": id}).to_string();
    let path = format!("/tunnel_sessions/{id}/update");
    let reply = async {
        let command = next_json(&mut ws).await;
        let ack = json!({"type": "ack", "command_id": command["command_id"], "refused": "no_update_available"});
        ws.send(Message::text(ack.to_string())).await.unwrap();
    };
    let ((status, body), ()) =
        tokio::join!(server.call(Method::POST, &path, &key, Some(&same)), reply);
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert_eq!(body["error_code"], ErrorCode::NoUpdateAvailable.as_str());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hellos_past_the_core_limits_are_refused() {
    let server = Server::start("3.4.1", "local", timings()).await;
    let key = server.account().await;
    let (_, token) = server.credential(&key, &[]).await;
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
    let server = Server::start(
        "3.4.1",
        "local",
        Timings {
            hello_timeout: Duration::from_secs(600),
            max_pending_hellos: 1,
            ..timings()
        },
    )
    .await;
    let key = server.account().await;
    let (_, token) = server.credential(&key, &[]).await;
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_that_stops_reading_loses_its_session() {
    // Heartbeats far apart: without a write time limit nothing else would ever notice.
    let server = Server::start(
        "3.4.1",
        "local",
        Timings {
            command_timeout: Duration::from_secs(600),
            heartbeat: Duration::from_secs(600),
            send_timeout: Duration::from_millis(300),
            ..timings()
        },
    )
    .await;
    let key = server.account().await;
    let (_, token) = server.credential(&key, &[]).await;
    // A client with a tiny receive buffer, so the server's writes back up quickly.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(2048).unwrap();
    let tcp = socket.connect(server.addr).await.unwrap();
    let (mut ws, _) = tokio_tungstenite::client_async(connect_url(&server.url()).unwrap(), tcp)
        .await
        .unwrap();
    ws.send(hello(&token, "3.4.0")).await.unwrap();
    let welcome = loop {
        match ws.next().await {
            Some(Ok(Message::Text(text))) => break serde_json::from_str::<Value>(&text).unwrap(),
            Some(Ok(_)) => continue,
            other => panic!("no welcome: {other:?}"),
        }
    };
    let id = welcome["session_id"].as_str().unwrap().to_owned();
    // From now on the client reads nothing. Commands (each with a bulky target, to fill the
    // socket buffers fast) pile up until a write blocks; every caller then hears that the
    // session ended, and the session is gone.
    let account_id = server
        .state
        .store
        .authenticate_authtoken(&token)
        .await
        .unwrap()
        .unwrap()
        .account_id;
    let mut calls = tokio::task::JoinSet::new();
    for _ in 0..100 {
        let registry = server.state.registry.clone();
        let (account_id, id) = (account_id.clone(), id.clone());
        calls.spawn(async move {
            registry
                .command(
                    &account_id,
                    &id,
                    AgentCommand::Update,
                    Some("9".repeat(50_000)),
                )
                .await
        });
    }
    let outcomes = tokio::time::timeout(WAIT, calls.join_all())
        .await
        .expect("a blocked write to the agent held every caller");
    assert!(
        outcomes
            .iter()
            .all(|o| matches!(o, Err(CommandError::Ended | CommandError::NotFound))),
        "{outcomes:?}"
    );
    assert!(server.session_ids(&key).await.is_empty());
    drop(ws);
}
