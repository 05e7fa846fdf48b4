//! What the audit log records of sessions and agent commands (`docs/api/events.md`): a session's
//! start (by the agent), its end with the reason and whoever caused it, and every command that
//! reached the agent with its result; a command refused before it was sent records nothing.

use crate::support::{Server, WAIT};
use crate::{accept_next, answer_next, next_json, quiet_timings, welcomed};
use axum::http::{Method, StatusCode};
use futures_util::SinkExt;
use serde_json::{Value, json};
use std::time::Duration;
use tokio_tungstenite::tungstenite::Message;

/// The events about `object_id`, oldest first, once `count` of them exist (bounded wait: a
/// session's end is recorded when its connection task finishes, just after the API answered).
async fn events_of(server: &Server, key: &str, object_id: &str, count: usize) -> Vec<Value> {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let (status, page) = server
            .get(&format!("/events?object_id={object_id}"), key)
            .await;
        assert_eq!(status, StatusCode::OK, "{page}");
        let mut events = page["events"].as_array().unwrap().clone();
        if events.len() >= count {
            events.reverse();
            return events;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "expected {count} events of {object_id}, got {events:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn types(events: &[Value]) -> Vec<&str> {
    events.iter().map(|e| e["type"].as_str().unwrap()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_records_its_start_its_commands_and_who_ended_it() {
    let (server, key, token) = Server::with_credential("3.4.1", quiet_timings()).await;
    let (_, admin) = server.get("/events?type=credential_created.v0", &key).await;
    let admin_id = admin["events"][0]["actor"]["id"].clone();
    let credential_id = admin["events"][0]["object_id"].clone();

    let (mut ws, id) = welcomed(&server, &token, "3.4.0").await;
    // A refused update reached the agent: recorded with the refusal.
    let reply = async { answer_next(&mut ws, Some("update_in_progress")).await };
    let ((status, _), _) = tokio::join!(server.command(&id, "update", &key), reply);
    assert_eq!(status, StatusCode::CONFLICT);
    // No answer: a 504, recorded as timed out.
    let ((status, _), _) = tokio::join!(server.command(&id, "restart", &key), next_json(&mut ws));
    assert_eq!(status, StatusCode::GATEWAY_TIMEOUT);
    // Accepted stop: the session ends, on the caller's behalf.
    let ((status, _), _) = tokio::join!(server.command(&id, "stop", &key), accept_next(&mut ws));
    assert_eq!(status, StatusCode::NO_CONTENT);
    // A command to the session now gone was never sent: nothing recorded.
    assert_eq!(
        server.command(&id, "stop", &key).await.0,
        StatusCode::NOT_FOUND
    );
    ws.close(None).await.unwrap();

    let log = events_of(&server, &key, &id, 5).await;
    assert_eq!(
        types(&log),
        [
            "tunnel_session_started.v0",
            "tunnel_session_update_requested.v0",
            "tunnel_session_restart_requested.v0",
            "tunnel_session_stop_requested.v0",
            "tunnel_session_ended.v0",
        ]
    );
    assert_eq!(
        log[0]["actor"],
        json!({"type": "agent", "id": credential_id, "api_key_id": null})
    );
    assert_eq!(log[0]["operation_id"], Value::Null);
    assert_eq!(log[0]["object"]["id"], json!(id));
    assert_eq!(log[0]["object"]["agent_version"], "3.4.0");
    assert_eq!(
        log[1]["details"],
        json!({"command": "update", "result": "refused", "error_code": "ERR_TUNNEL_143"})
    );
    assert_eq!(
        log[2]["details"],
        json!({"command": "restart", "result": "timed_out"})
    );
    assert_eq!(
        log[3]["details"],
        json!({"command": "stop", "result": "accepted"})
    );
    for event in &log[1..] {
        assert_eq!(event["actor"]["type"], "user");
        assert_eq!(event["actor"]["id"], admin_id);
        assert!(event["operation_id"].as_str().unwrap().starts_with("op_"));
    }
    assert_eq!(log[4]["details"], json!({"reason": "stopped"}));
    // The end and the stop share the request that caused them.
    assert_eq!(log[4]["operation_id"], log[3]["operation_id"]);
    // Nothing here crossed to another account.
    let other = server.account().await;
    let (_, theirs) = server.get("/events", &other).await;
    assert_eq!(theirs["events"], json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_end_says_why_credential_deleted_acl_changed_or_disconnected() {
    // These clients never read: quiet heartbeats.
    let server = Server::start("", "local", quiet_timings()).await;
    let key = server.account().await;

    // The agent leaves on its own: disconnected, by the agent.
    let (credential, token) = server.credential(&key, &[]).await;
    let (mut ws, left) = welcomed(&server, &token, "3.4.0").await;
    ws.send(Message::Close(None)).await.unwrap();
    let log = events_of(&server, &key, &left, 2).await;
    assert_eq!(log[1]["details"], json!({"reason": "disconnected"}));
    assert_eq!(log[1]["actor"]["type"], "agent");
    assert_eq!(log[1]["actor"]["id"], json!(credential));

    // Its credential deleted: by whoever deleted it, in that request.
    let (_gone_ws, gone) = welcomed(&server, &token, "3.4.0").await;
    let (status, headers, _) = server
        .call_with_headers(
            Method::DELETE,
            &format!("/credentials/{credential}"),
            &key,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let log = events_of(&server, &key, &gone, 2).await;
    assert_eq!(log[1]["details"], json!({"reason": "credential_deleted"}));
    assert_eq!(log[1]["actor"]["type"], "user");
    assert_eq!(
        log[1]["operation_id"].as_str(),
        headers["operation-id"].to_str().ok()
    );

    // An ACL that no longer admits its binds.
    let (narrowed, token) = server.credential(&key, &[]).await;
    // A session that binds nothing is admitted by any ACL and stays; one binding a label the
    // new ACL does not allow ends.
    let (_kept_ws, kept) = welcomed(&server, &token, "3.4.0").await;
    let body = json!({"acl": ["bind:only.example.com"]}).to_string();
    let mut ws = crate::open(&server).await;
    let hello = json!({
        "type": "hello", "authtoken": token, "agent_version": "3.4.0", "os": "linux",
        "metadata": "", "update_checks": true, "binds": ["app=web"]
    });
    ws.send(Message::text(hello.to_string())).await.unwrap();
    let welcome = next_json(&mut ws).await;
    let labelled = welcome["session_id"].as_str().unwrap().to_owned();
    let (status, _) = server
        .call(
            Method::PATCH,
            &format!("/credentials/{narrowed}"),
            &key,
            Some(&body),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let log = events_of(&server, &key, &labelled, 2).await;
    assert_eq!(log[1]["details"], json!({"reason": "acl_changed"}));
    assert_eq!(log[1]["actor"]["type"], "user");
    assert_eq!(server.session_ids(&key).await, std::slice::from_ref(&kept));
    assert_eq!(
        types(&events_of(&server, &key, &kept, 1).await),
        ["tunnel_session_started.v0"]
    );
}
