//! The server's side of the agent channel (`docs/agent-channel.md`), driven by a hand-written
//! WebSocket client that behaves in ways the real agent never does: no acknowledgement (504),
//! a bad or missing hello, a peer that goes silent. Also checks what the server sends in its
//! commands. One test binary: `commands` (what the API answers for agent commands), `hellos`
//! (what the server accepts before a session exists), `liveness` (how a session ends).

#[path = "../support/mod.rs"]
mod support;

mod commands;
mod events;
mod hellos;
mod liveness;

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use std::time::Duration;
use support::{Server, WAIT};
use tokio_tungstenite::tungstenite::Message;
use tunnel_agent::config::connect_url;
use tunnel_server::agents::Timings;

pub type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

pub fn timings() -> Timings {
    Timings {
        command_timeout: Duration::from_millis(700),
        heartbeat: Duration::from_millis(200),
        hello_timeout: Duration::from_millis(500),
        ..Timings::default()
    }
}

/// [`timings`] with heartbeats slow enough that a client which does not read for a while (it
/// only reads when it expects a command, or never) is not taken for dead.
pub fn quiet_timings() -> Timings {
    Timings {
        heartbeat: Duration::from_secs(30),
        ..timings()
    }
}

pub async fn open(server: &Server) -> Ws {
    tokio_tungstenite::connect_async(connect_url(&server.url()).unwrap())
        .await
        .unwrap()
        .0
}

pub fn hello(token: &str, version: &str) -> Message {
    let hello = json!({
        "type": "hello", "authtoken": token, "agent_version": version, "os": "linux",
        "metadata": "", "update_checks": true, "binds": []
    });
    Message::text(hello.to_string())
}

/// The next JSON text frame from the server (bounded wait).
pub async fn next_json(ws: &mut Ws) -> Value {
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

pub async fn welcomed(server: &Server, token: &str, version: &str) -> (Ws, String) {
    let mut ws = open(server).await;
    ws.send(hello(token, version)).await.unwrap();
    let welcome = next_json(&mut ws).await;
    assert_eq!(welcome["type"], "welcome", "{welcome}");
    let id = welcome["session_id"].as_str().unwrap().to_owned();
    (ws, id)
}

/// Acknowledges the next command as accepted; returns it.
pub async fn accept_next(ws: &mut Ws) -> Value {
    answer_next(ws, None).await
}

/// Acknowledges the next command, refusing it with `refused` if given; returns it.
pub async fn answer_next(ws: &mut Ws, refused: Option<&str>) -> Value {
    let command = next_json(ws).await;
    let mut ack = json!({"type": "ack", "command_id": command["command_id"]});
    if let Some(reason) = refused {
        ack["refused"] = json!(reason);
    }
    ws.send(Message::text(ack.to_string())).await.unwrap();
    command
}
