//! A lost link: the real agent reconnects with backoff and opens a new session, whether the
//! connection drops or silently stops carrying anything (heartbeats detect that).

mod support;

use axum::http::StatusCode;
use std::time::Duration;
use support::{Agent, Fault, Proxy, Server, fast_timings};
use tunnel_server::agents::Timings;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_connection_reconnects_under_a_new_session() {
    let server = Server::start("3.4.1", "local", fast_timings()).await;
    let key = server.account().await;
    let (_, token) = server.credential(&key, &[]).await;
    let proxy = Proxy::start(server.addr).await;
    let mut agent = Agent::spawn_to(&proxy.url(), &token, &[]);
    let first = agent.session().await;

    proxy.fault(Fault::Cut);
    agent
        .wait_line("the loss", |l| {
            l.starts_with("connection lost").then_some(())
        })
        .await;
    let second = agent.session().await;
    assert_ne!(first, second);
    server
        .wait_session_status(&first, &key, StatusCode::NOT_FOUND)
        .await;
    assert_eq!(server.session_ids(&key).await, vec![second.clone()]);
    assert!(agent.running());

    // And once more, to see the backoff start over after a session opened.
    proxy.fault(Fault::Cut);
    let third = agent.session().await;
    assert_ne!(third, second);
    assert_eq!(
        server.command(&third, "stop", &key).await.0,
        StatusCode::NO_CONTENT
    );
    assert!(agent.exit().await.0.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_link_is_detected_by_heartbeats() {
    let server = Server::start("3.4.1", "local", fast_timings()).await;
    let key = server.account().await;
    let (_, token) = server.credential(&key, &[]).await;
    let proxy = Proxy::start(server.addr).await;
    let mut agent = Agent::spawn_to(&proxy.url(), &token, &["--heartbeat-ms", "200"]);
    let first = agent.session().await;

    proxy.fault(Fault::Freeze);
    let reason = agent
        .wait_line("the loss", |l| {
            l.strip_prefix("connection lost (").map(str::to_owned)
        })
        .await;
    assert!(reason.starts_with("no heartbeat"), "{reason}");
    let second = agent.session().await;
    assert_ne!(first, second);
    assert_eq!(
        server.command(&second, "stop", &key).await.0,
        StatusCode::NO_CONTENT
    );
    assert!(agent.exit().await.0.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heartbeats_hold_an_idle_session() {
    // The server gives up on a peer after three silent 100 ms intervals; a live agent answers
    // every ping (and pings itself), so its session outlives many of those intervals.
    let timings = Timings {
        heartbeat: Duration::from_millis(100),
        ..fast_timings()
    };
    let server = Server::start("3.4.1", "local", timings).await;
    let key = server.account().await;
    let (_, token) = server.credential(&key, &[]).await;
    let mut agent = Agent::spawn(&server, &token, &["--heartbeat-ms", "100"]);
    let id = agent.session().await;
    for _ in 0..15 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert_eq!(server.session_ids(&key).await, vec![id.clone()]);
    }
    assert!(agent.running());
    assert_eq!(
        server.command(&id, "stop", &key).await.0,
        StatusCode::NO_CONTENT
    );
    assert!(agent.exit().await.0.success());
    let lines = agent.all_lines().await;
    assert_eq!(
        lines.last().map(String::as_str),
        Some("stopped"),
        "{lines:?}"
    );
    assert!(
        !lines.iter().any(|l| l.starts_with("connection lost")),
        "{lines:?}"
    );
}
