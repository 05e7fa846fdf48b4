//! How a session ends without a goodbye: a peer that stops answering pings, a closed
//! connection (at once, or as soon as the database takes the end), an agent that stops reading
//! (its blocked writes time out).

use crate::support::{Server, WAIT};
use crate::{hello, quiet_timings, timings, welcomed};
use axum::http::StatusCode;
use futures_util::{SinkExt, StreamExt};
use serde_json::Value;
use sqlx::Connection as _;
use sqlx::sqlite::SqliteConnection;
use std::time::Duration;
use tokio_tungstenite::tungstenite::Message;
use tunnel_agent::config::connect_url;
use tunnel_core::resources::tunnel_session::AgentCommand;
use tunnel_server::agents::Timings;
use tunnel_server::agents::registry::CommandError;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_peer_that_stops_answering_pings_loses_its_session() {
    let timings = Timings {
        heartbeat: Duration::from_millis(500),
        ..timings()
    };
    let (server, key, token) = Server::with_credential("3.4.1", timings).await;
    // The connection stays open, but the client no longer reads, so it answers no ping.
    let (_ws, id) = welcomed(&server, &token, "3.4.0").await;
    assert_eq!(server.session_ids(&key).await, vec![id.clone()]);
    server
        .wait_session_status(&id, &key, StatusCode::NOT_FOUND)
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_connection_removes_the_session_at_once() {
    let (server, key, token) = Server::with_credential("3.4.1", quiet_timings()).await;
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_that_stops_reading_loses_its_session() {
    // Heartbeats far apart: without a write time limit nothing else would ever notice.
    let (server, key, token) = Server::with_credential(
        "3.4.1",
        Timings {
            command_timeout: Duration::from_secs(600),
            heartbeat: Duration::from_secs(600),
            send_timeout: Duration::from_millis(300),
            ..timings()
        },
    )
    .await;
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
                    &tunnel_server::store::Cause::system(),
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_end_the_database_refused_is_recorded_later() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tunnel.db");
    let (server, key, token) = Server::on_sqlite_file(&file, quiet_timings()).await;
    let (mut ws, id) = welcomed(&server, &token, "3.4.0").await;
    // Another process's write lock on the file, held past the server's busy timeout (5 s): the
    // session's end cannot be written when the connection closes.
    let mut other = SqliteConnection::connect(&format!("sqlite://{}", file.display()))
        .await
        .unwrap();
    sqlx::raw_sql("BEGIN IMMEDIATE")
        .execute(&mut other)
        .await
        .unwrap();
    ws.close(None).await.unwrap();
    tokio::time::sleep(Duration::from_secs(7)).await;
    assert!(
        server.session_ids(&key).await.contains(&id),
        "the end was written through the lock"
    );
    sqlx::raw_sql("COMMIT").execute(&mut other).await.unwrap();
    // Without a retry the session would stay listed as long as this node lives.
    let deadline = tokio::time::Instant::now() + WAIT;
    while server.session_ids(&key).await.contains(&id) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "session still listed after the lock was released"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (status, page) = server.get(&format!("/events?object_id={id}"), &key).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    let ended: Vec<&Value> = page["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == "tunnel_session_ended.v0")
        .collect();
    assert_eq!(ended.len(), 1, "{page}");
    assert_eq!(ended[0]["details"]["reason"], "disconnected", "{page}");
}
