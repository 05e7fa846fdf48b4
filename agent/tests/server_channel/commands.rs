//! Agent commands through the API: no acknowledgement is a 504 and acks are matched by id,
//! the update's target, two concurrent stops, a connection lost mid-command, the body `id`, and
//! the agent's update reports holding a restart back.

use crate::support::{Server, WAIT};
use crate::{accept_next, answer_next, next_json, quiet_timings, timings, welcomed};
use axum::http::{Method, StatusCode};
use futures_util::SinkExt;
use serde_json::json;
use std::time::Duration;
use tokio_tungstenite::tungstenite::Message;
use tunnel_core::ErrorCode;
use tunnel_server::agents::Timings;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_that_does_not_answer_gets_a_504_and_acks_are_matched_by_id() {
    // Heartbeats slow enough that this client, which reads only when it expects a command, is
    // not taken for dead while it keeps the API waiting.
    let (server, key, token) = Server::with_credential("3.4.1,2.9.0", quiet_timings()).await;
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
    let reply = async { answer_next(&mut ws, Some("update_in_progress")).await };
    let ((status, body), command) = tokio::join!(server.command(&id, "update", &key), reply);
    assert_eq!(command["target_version"], "3.4.1");
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(body["error_code"], ErrorCode::UpdateInProgress.as_str());

    // None of this cost the session.
    assert_eq!(server.session_ids(&key).await, vec![id]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_target_is_sent_when_nothing_newer_exists_in_the_major_version() {
    let (server, key, token) = Server::with_credential("3.4.1,2.9.0", timings()).await;
    for version in ["3.4.1", "4.0.0", "1.0.0"] {
        let (mut ws, id) = welcomed(&server, &token, version).await;
        let reply = answer_next(&mut ws, Some("no_update_available"));
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
async fn of_two_concurrent_stops_one_is_accepted_and_the_other_finds_no_session() {
    // A long command timeout: the losing stop must not wait for it (a 504), it must learn at
    // once that the session is going away (404).
    let (server, key, token) = Server::with_credential(
        "3.4.1",
        Timings {
            command_timeout: Duration::from_secs(60),
            ..quiet_timings()
        },
    )
    .await;
    let (mut ws, id) = welcomed(&server, &token, "3.4.0").await;

    // The agent waits until it has both stops, then accepts the first and says nothing more
    // (it is leaving; it never answers the second). Waiting for both first makes sure both
    // were sent, whatever time each request takes to find the session.
    let agent = async {
        let first = next_json(&mut ws).await;
        let second = next_json(&mut ws).await;
        let ack = json!({"type": "ack", "command_id": first["command_id"]});
        ws.send(Message::text(ack.to_string())).await.unwrap();
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
    let (server, key, token) = Server::with_credential(
        "3.4.1",
        Timings {
            command_timeout: Duration::from_secs(60),
            ..quiet_timings()
        },
    )
    .await;
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
    let (server, key, token) = Server::with_credential("3.4.1", timings()).await;
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
        answer_next(&mut ws, Some("no_update_available")).await;
    };
    let ((status, body), ()) =
        tokio::join!(server.call(Method::POST, &path, &key, Some(&same)), reply);
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert_eq!(body["error_code"], ErrorCode::NoUpdateAvailable.as_str());
}

/// Waits until every message sent on `ws` so far was handled: the server handles one
/// connection's messages in order, so an answered command proves the earlier ones were filed.
async fn settle(server: &Server, ws: &mut crate::Ws, id: &str, key: &str) {
    let reply = answer_next(ws, Some("update_in_progress"));
    let ((status, _), _) = tokio::join!(server.command(id, "update", key), reply);
    assert_eq!(status, StatusCode::CONFLICT);
}

/// Update reports from a peer: a malformed one is ignored (the session still restarts at once),
/// an `updating` one holds a restart back without a round trip to the agent, and an `updated`
/// one is counted from the server's receipt less what the agent said had elapsed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn update_reports_hold_restart_back_and_bad_ones_are_ignored() {
    // Heartbeats slow enough that this client, which does not read while the test sleeps, is
    // not taken for dead.
    let timings = quiet_timings();
    let (server, key, token) = Server::with_credential("3.4.1", timings).await;
    let (mut ws, id) = welcomed(&server, &token, "3.4.0").await;
    let path = format!("/tunnel_sessions/{id}");
    let report = |update: serde_json::Value| {
        Message::text(json!({"type": "update_state", "update": update}).to_string())
    };
    for bad in [
        json!({"state": "updating", "target": "not a version", "remaining_ms": 1000}),
        json!({"state": "paused", "target": "3.4.1"}),
    ] {
        ws.send(report(bad)).await.unwrap();
    }
    settle(&server, &mut ws, &id, &key).await;
    let (_, s) = server.get(&path, &key).await;
    assert_eq!(s["agent_update_state"], serde_json::Value::Null, "{s}");
    // An agent refusing a restart because it is applying an update the server has not heard of
    // gets the server's own answer to that case.
    let reply = answer_next(&mut ws, Some("restart_during_update"));
    let ((status, body), command) = tokio::join!(server.command(&id, "restart", &key), reply);
    assert_eq!(command["command"], "restart");
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert_eq!(body["error_code"], ErrorCode::RestartDuringUpdate.as_str());
    assert_eq!(body["details"]["retry_after_secs"], 1, "{body}");

    ws.send(report(
        json!({"state": "updating", "target": "3.4.1", "remaining_ms": 60_000}),
    ))
    .await
    .unwrap();
    settle(&server, &mut ws, &id, &key).await;
    let (status, body) = server.command(&id, "restart", &key).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert_eq!(body["error_code"], ErrorCode::RestartDuringUpdate.as_str());
    assert_eq!(body["details"]["retry_after_secs"], 60, "{body}");

    // Finished 8.5 s ago by the agent's clock: 1.5 s of the 10 s wait are left, shown as 2.
    ws.send(report(
        json!({"state": "updated", "version": "3.4.1", "elapsed_ms": 8_500}),
    ))
    .await
    .unwrap();
    settle(&server, &mut ws, &id, &key).await;
    let (status, body) = server.command(&id, "restart", &key).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert_eq!(body["error_code"], ErrorCode::RestartTooSoon.as_str());
    assert_eq!(body["details"]["retry_after_secs"], 2, "{body}");
    tokio::time::sleep(Duration::from_secs(2)).await;
    let (_, s) = server.get(&path, &key).await;
    assert_eq!(
        s["agent_update_state"],
        json!({"state": "updated", "version": "3.4.1", "restart_available_in_secs": 0})
    );
    let (answer, command) =
        tokio::join!(server.command(&id, "restart", &key), accept_next(&mut ws));
    assert_eq!(command["command"], "restart");
    assert_eq!(answer.0, StatusCode::NO_CONTENT, "{}", answer.1);
}
