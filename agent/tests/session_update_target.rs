//! The `agent_update_target` / `agent_update_checks` extensions of a tunnel session, with real
//! agents against a server whose `--agent-latest` catalogue is `3.4.1,2.9.0`: the field names
//! the target exactly when an update can succeed, on GET of the session and in the list alike.

mod support;

use axum::http::StatusCode;
use serde_json::Value;
use support::{Agent, Server, fast_timings};
use tunnel_core::ErrorCode;

/// The session as GET /tunnel_sessions/{id} answers it, and as the list shows it.
async fn both_views(server: &Server, key: &str, id: &str) -> (Value, Value) {
    let (status, one) = server.get(&format!("/tunnel_sessions/{id}"), key).await;
    assert_eq!(status, StatusCode::OK, "{one}");
    let (status, list) = server.get("/tunnel_sessions", key).await;
    assert_eq!(status, StatusCode::OK, "{list}");
    let listed = list["tunnel_sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == id)
        .unwrap_or_else(|| panic!("{id} not listed: {list}"))
        .clone();
    (one, listed)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_update_target_is_shown_and_is_what_update_does() {
    let (server, key, token) = Server::with_credential("3.4.1,2.9.0", fast_timings()).await;

    // (agent arguments, expected target, expected update checks)
    let cases: &[(&[&str], Option<&str>, bool)] = &[
        (&["--report-version", "3.4.0"], Some("3.4.1"), true),
        (&["--report-version", "2.1.0"], Some("2.9.0"), true),
        (&["--report-version", "3.4.1"], None, true),
        (&["--report-version", "3.5.0"], None, true),
        (&["--report-version", "4.0.0"], None, true),
        (
            &["--report-version", "3.4.0", "--no-update-check"],
            None,
            false,
        ),
    ];
    let mut agents = Vec::new();
    for (args, target, checks) in cases {
        let mut agent = Agent::spawn(&server, &token, args);
        let id = agent.session().await;
        let (one, listed) = both_views(&server, &key, &id).await;
        for s in [&one, &listed] {
            assert_eq!(
                s["agent_update_target"],
                target.map_or(Value::Null, Value::from),
                "{args:?}: {s}"
            );
            assert_eq!(s["agent_update_checks"], *checks, "{args:?}: {s}");
        }
        agents.push((agent, id, *target, *checks));
    }

    // The field predicts the command: no target, no update (with the agent's own reason).
    for (_, id, target, checks) in &agents {
        if target.is_some() {
            continue;
        }
        let (status, body) = server.command(id, "update", &key).await;
        let code = if *checks {
            ErrorCode::NoUpdateAvailable
        } else {
            ErrorCode::UpdateChecksDisabled
        };
        assert_eq!(status.as_u16(), code.status(), "{body}");
        assert_eq!(body["error_code"], code.as_str(), "{body}");
    }

    // A target means the update goes through, to that version; after the restart the new
    // session runs it and has nothing newer to go to.
    let (agent, id, _, _) = &mut agents[0];
    let (status, body) = server.command(id, "update", &key).await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    let done = agent
        .wait_line("update complete", |l| {
            l.strip_prefix("updated to ").map(str::to_owned)
        })
        .await;
    assert_eq!(done, "3.4.1; restart pending");
    let (status, body) = server.restart_after_update(id, &key).await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    let new_id = agent.session().await;
    let (one, listed) = both_views(&server, &key, &new_id).await;
    for s in [&one, &listed] {
        assert_eq!(s["agent_version"], "3.4.1", "{s}");
        assert_eq!(s["agent_update_target"], Value::Null, "{s}");
        assert_eq!(s["agent_update_checks"], true, "{s}");
    }
}
