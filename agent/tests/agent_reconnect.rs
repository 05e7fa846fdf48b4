//! A lost link: the real agent reconnects with backoff and opens a new session, whether the
//! connection drops or silently stops carrying anything (heartbeats detect that); an update in
//! progress is reported to the new session.

mod support;

use axum::http::StatusCode;
use std::time::Duration;
use support::{Agent, Fault, Proxy, Server, fast_timings};
use tunnel_core::ErrorCode;
use tunnel_server::agents::Timings;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_connection_reconnects_under_a_new_session() {
    let (server, key, token) = Server::with_credential("3.4.1", fast_timings()).await;
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

    // And once more, to see the backoff start over after a session that stayed up (longer
    // than the 0.5 s largest delay the harness sets).
    proxy.fault(Fault::Cut);
    let third = agent.session().await;
    assert_ne!(third, second);
    server.stop_agent(&mut agent, &third, &key).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_link_is_detected_by_heartbeats() {
    let (server, key, token) = Server::with_credential("3.4.1", fast_timings()).await;
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
    server.stop_agent(&mut agent, &second, &key).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heartbeats_hold_an_idle_session() {
    // The server gives up on a peer after three silent 100 ms intervals; a live agent answers
    // every ping (and pings itself), so its session outlives many of those intervals.
    let timings = Timings {
        heartbeat: Duration::from_millis(100),
        ..fast_timings()
    };
    let (server, key, token) = Server::with_credential("3.4.1", timings).await;
    let mut agent = Agent::spawn(&server, &token, &["--heartbeat-ms", "100"]);
    let id = agent.session().await;
    for _ in 0..15 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert_eq!(server.session_ids(&key).await, vec![id.clone()]);
    }
    assert!(agent.running());
    server.stop_agent(&mut agent, &id, &key).await;
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_dropped_at_once_do_not_reset_the_backoff() {
    use futures_util::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::Message;
    use tunnel_agent::{Config, Event};

    // A loopback "server" that welcomes every agent and hangs up right away, like a proxy that
    // accepts connections it cannot carry.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let mut n = 0u32;
        while let Ok((tcp, _)) = listener.accept().await {
            n += 1;
            let welcome =
                serde_json::json!({"type": "welcome", "session_id": format!("ts_fake{n}")});
            tokio::spawn(async move {
                let Ok(mut ws) = tokio_tungstenite::accept_async(tcp).await else {
                    return;
                };
                let _hello = ws.next().await;
                let _ = ws.send(Message::text(welcome.to_string())).await;
                let _ = ws.close(None).await;
            });
        }
    });

    let mut config = Config::new(format!("http://{addr}"), "t");
    config.backoff_initial = Duration::from_millis(20);
    config.backoff_max = Duration::from_secs(60);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let mut on_event = move |event: Event| {
        let _ = tx.send(event);
    };
    let collect = async {
        let (mut opened, mut delays) = (0, Vec::new());
        while delays.len() < 5 {
            match rx.recv().await {
                Some(Event::Opened { .. }) => opened += 1,
                Some(Event::Lost { retry_in, .. }) => delays.push(retry_in),
                Some(_) => {}
                None => break,
            }
        }
        (opened, delays)
    };
    let (opened, delays) = tokio::time::timeout(support::WAIT, async {
        tokio::select! {
            exit = tunnel_agent::run(&config, &mut on_event) => panic!("the agent gave up: {exit:?}"),
            got = collect => got,
        }
    })
    .await
    .expect("five reconnects in time");
    // Every attempt did open a session, and still each delay doubled: 20, 40, 80, 160, 320 ms
    // (plus up to 25% jitter), never back to 20 ms.
    assert!(opened >= 5, "{opened} sessions, delays {delays:?}");
    for (i, delay) in delays.iter().enumerate() {
        let floor = config.backoff_initial * 2u32.pow(i as u32);
        assert!(
            *delay >= floor,
            "delay {i} is {delay:?}, below {floor:?}: {delays:?}"
        );
    }
}

/// An update outlives a lost link: the agent tells the new session where its update stands, so
/// a restart through the new session is held back as well, and after the wait the agent comes
/// back on the new version.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_update_survives_a_reconnect_and_still_holds_restart_back() {
    // Long enough that the restart below always falls inside the update or the wait after it.
    let timings = Timings {
        update_restart_wait: Duration::from_secs(5),
        ..fast_timings()
    };
    let (server, key, token) = Server::with_credential("3.4.1", timings).await;
    let proxy = Proxy::start(server.addr).await;
    let mut agent = Agent::spawn_to(&proxy.url(), &token, &["--report-version", "3.4.0"]);
    let first = agent.session().await;
    let (status, body) = server.command(&first, "update", &key).await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");

    proxy.fault(Fault::Cut);
    let second = agent.session().await;
    assert_ne!(first, second);
    // The agent reports right after the welcome; the server files it a moment later.
    let deadline = tokio::time::Instant::now() + support::WAIT;
    let state = loop {
        let (_, s) = server
            .get(&format!("/tunnel_sessions/{second}"), &key)
            .await;
        if !s["agent_update_state"].is_null() {
            break s["agent_update_state"].clone();
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no update state: {s}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    match state["state"].as_str() {
        Some("updating") => assert_eq!(state["target"], "3.4.1", "{state}"),
        Some("updated") => {
            assert_eq!(state["version"], "3.4.1", "{state}");
            // Counted from when the update finished, not from the new session.
            assert!(
                state["restart_available_in_secs"].as_u64().unwrap() <= 5,
                "{state}"
            );
        }
        _ => panic!("{state}"),
    }
    let (status, body) = server.command(&second, "restart", &key).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert!(
        [ErrorCode::RestartDuringUpdate, ErrorCode::RestartTooSoon]
            .iter()
            .any(|c| body["error_code"] == c.as_str()),
        "{body}"
    );

    let (status, body) = server.restart_after_update(&second, &key).await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    let third = agent.session().await;
    let (_, s) = server.get(&format!("/tunnel_sessions/{third}"), &key).await;
    assert_eq!(s["agent_version"], "3.4.1", "{s}");
    assert_eq!(s["agent_update_state"], serde_json::Value::Null, "{s}");
    server.stop_agent(&mut agent, &third, &key).await;
}
