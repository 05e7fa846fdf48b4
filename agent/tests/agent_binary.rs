//! The real `tunnel-agent` binary against the real server over a loopback socket: ACL forms,
//! session fields, listing, restart/stop/update with every refusal, Windows, credential
//! deletion, a credential's ACL changed under live sessions, and account isolation.
//!
//! One file of about 600 lines on purpose: each test is one behaviour of the binary from the same
//! list, sharing `server()` and `assert_error`; split into files, every part would be another
//! test binary linking the server and the agent again (minutes on a 2-core machine), and split
//! into modules of one binary, the list would be harder to read than it is long.

mod support;

use axum::http::header::RETRY_AFTER;
use axum::http::{HeaderMap, Method, StatusCode};
use serde_json::{Value, json};
use std::time::Duration;
use support::{Agent, Server, fast_timings};
use tunnel_core::ErrorCode;
use tunnel_core::limits::UPDATE_RESTART_WAIT_SECS;
use tunnel_server::agents::Timings;

async fn server() -> Server {
    Server::start("3.4.1,2.9.0", "test-region", fast_timings()).await
}

fn assert_error(status: StatusCode, body: &Value, code: ErrorCode) {
    assert_eq!(status.as_u16(), code.status(), "{body}");
    assert_eq!(body["error_code"], code.as_str(), "{body}");
    assert!(
        body["msg"].as_str().is_some_and(|m| !m.is_empty()),
        "{body}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_acl_form_permits_and_refuses() {
    let server = server().await;
    let key = server.account().await;
    // (ACL, agent arguments, permitted?)
    let cases: &[(&[&str], &[&str], bool)] = &[
        (&[], &["--bind", "anything.example.org"], true),
        (
            &["*"],
            &["--bind", "anything.example.org", "--label", "k=v"],
            true,
        ),
        (&["bind:example.com"], &["--bind", "example.com"], true),
        (&["bind:example.com"], &["--bind", "www.example.com"], false),
        (
            &["bind:*.example.com"],
            &["--bind", "a.b.example.com"],
            true,
        ),
        (&["bind:*.example.com"], &["--bind", "*.example.com"], true),
        (&["bind:*.example.com"], &["--bind", "example.com"], false),
        (
            &["bind:db.example.com:5432"],
            &["--bind", "db.example.com:5432"],
            true,
        ),
        (
            &["bind:db.example.com:5432"],
            &["--bind", "db.example.com:5433"],
            false,
        ),
        (&["bind:env=prod"], &["--label", "env=prod"], true),
        (&["bind:env=prod"], &["--label", "env=dev"], false),
        (&["bind:env=*"], &["--label", "env=dev"], true),
        (&["bind:*=prod"], &["--label", "team=prod"], true),
        (&["bind:*=prod"], &["--label", "team=dev"], false),
        // A label given to --bind is bound as one (with a warning, checked below).
        (&["bind:env=prod"], &["--bind", "env=prod"], true),
        // Every bind must be permitted, not just one.
        (
            &["bind:example.com"],
            &["--bind", "example.com", "--bind", "evil.com"],
            false,
        ),
        // Kinds do not cross: a domain rule does not permit an address on it.
        (&["bind:example.com"], &["--bind", "example.com:443"], false),
    ];
    for (acl, args, permitted) in cases {
        let (_, token) = server.credential(&key, acl).await;
        let mut agent = Agent::spawn(&server, &token, args);
        if *permitted {
            let id = agent.session().await;
            assert!(
                server.session_ids(&key).await.contains(&id),
                "{acl:?} {args:?}"
            );
            let (status, body) = server.command(&id, "stop", &key).await;
            assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
            let (status, stderr) = agent.exit().await;
            assert!(status.success(), "{stderr}");
            let label_to_bind = args
                .windows(2)
                .any(|w| w[0] == "--bind" && w[1].contains('='));
            assert_eq!(
                stderr.contains("give labels with --label"),
                label_to_bind,
                "{args:?}: {stderr}"
            );
        } else {
            let (status, stderr) = agent.exit().await;
            assert_eq!(status.code(), Some(4), "{acl:?} {args:?}: {stderr}");
            assert!(
                stderr.contains(ErrorCode::BindNotPermitted.as_str()),
                "{stderr}"
            );
            assert!(stderr.contains("does not permit"), "{stderr}");
            assert!(
                !stderr.contains(&token),
                "the authtoken must never be printed"
            );
        }
    }
    assert!(server.session_ids(&key).await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_tokens_are_refused_and_tokens_are_not_api_keys() {
    let server = server().await;
    let key = server.account().await;
    let (_, token) = server.credential(&key, &[]).await;

    // The last character changed, to one it cannot already be (base62 tokens end in `x` one
    // time in 62, and that "wrong" token would be the right one).
    let (head, last) = token.split_at(token.len() - 1);
    let wrong = format!("{head}{}", if last == "x" { "y" } else { "x" });
    assert_ne!(wrong, token);
    let mut agent = Agent::spawn(&server, &wrong, &[]);
    let (status, stderr) = agent.exit().await;
    assert_eq!(status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains(ErrorCode::AgentAuthFailed.as_str()),
        "{stderr}"
    );
    assert!(!stderr.contains(&wrong));

    // An API key is not an authtoken…
    let mut agent = Agent::spawn(&server, &key, &[]);
    assert_eq!(agent.exit().await.0.code(), Some(3));
    // …and an authtoken is not an API key.
    let (status, body) = server.get("/tunnel_sessions", &token).await;
    assert_error(status, &body, ErrorCode::InvalidApiKey);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_fields_and_only_online_sessions_are_listed() {
    let server = server().await;
    let key = server.account().await;
    let (cred_id, token) = server.credential(&key, &[]).await;
    let mut agent = Agent::spawn(
        &server,
        &token,
        &[
            "--metadata",
            "rack 7",
            "--report-version",
            "3.4.0",
            "--report-os",
            "freebsd",
            "--bind",
            "a.example.com",
        ],
    );
    let id = agent.session().await;
    assert!(id.starts_with("ts_") && id.len() == 30, "{id}");
    let (status, s) = server.get(&format!("/tunnel_sessions/{id}"), &key).await;
    assert_eq!(status, StatusCode::OK, "{s}");
    assert_eq!(s["id"], id.as_str());
    assert_eq!(
        s["uri"],
        format!("{}/api/tunnel_sessions/{id}", server.url())
    );
    assert_eq!(s["agent_version"], "3.4.0");
    assert_eq!(s["os"], "freebsd");
    assert_eq!(s["metadata"], "rack 7");
    assert_eq!(s["ip"], "127.0.0.1");
    assert_eq!(s["region"], "test-region");
    assert_eq!(s["transport"], "tunnel/v2");
    assert_eq!(s["credential"]["id"], cred_id.as_str());
    assert_eq!(
        s["credential"]["uri"],
        format!("{}/api/credentials/{cred_id}", server.url())
    );
    let started = s["started_at"].as_str().unwrap();
    assert!(
        started.len() == 20 && started.ends_with('Z') && started.as_bytes()[10] == b'T',
        "{started}"
    );

    // A second agent; both listed, newest first.
    let mut second = Agent::spawn(&server, &token, &[]);
    let id2 = second.session().await;
    assert_eq!(s["os"], "freebsd");
    let (_, second_session) = server.get(&format!("/tunnel_sessions/{id2}"), &key).await;
    assert_eq!(
        second_session["os"],
        std::env::consts::OS,
        "default OS is the real one"
    );
    assert_eq!(
        second_session["agent_version"],
        env!("CARGO_PKG_VERSION"),
        "default version is the crate's"
    );
    assert_eq!(
        server.session_ids(&key).await,
        vec![id2.clone(), id.clone()]
    );

    // A dead agent (killed, no goodbye) is no longer listed.
    agent.kill().await;
    server
        .wait_session_status(&id, &key, StatusCode::NOT_FOUND)
        .await;
    assert_eq!(server.session_ids(&key).await, vec![id2]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restart_gives_a_new_session_and_stop_exits_zero() {
    let server = server().await;
    let key = server.account().await;
    let (_, token) = server.credential(&key, &["bind:*.example.com"]).await;
    let mut agent = Agent::spawn(
        &server,
        &token,
        &["--bind", "x.example.com", "--report-version", "3.4.0"],
    );
    let first = agent.session().await;

    // A body of `{}` is accepted like a missing one; unknown fields are not.
    let path = format!("/tunnel_sessions/{first}/restart");
    let (status, body) = server
        .call(Method::POST, &path, &key, Some(r#"{"force":true}"#))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let (status, body) = server.call(Method::POST, &path, &key, Some("{}")).await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    // The old session is gone as soon as the restart is acknowledged.
    let (status, body) = server.get(&format!("/tunnel_sessions/{first}"), &key).await;
    assert_error(status, &body, ErrorCode::NotFound);
    let (status, body) = server.command(&first, "stop", &key).await;
    assert_error(status, &body, ErrorCode::NotFound);

    let second = agent.session().await;
    assert_ne!(first, second);
    assert!(
        agent.running(),
        "restart replaced the process image, it did not exit"
    );
    let (status, s) = server
        .get(&format!("/tunnel_sessions/{second}"), &key)
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(s["agent_version"], "3.4.0", "no update was pending");
    assert_eq!(server.session_ids(&key).await, vec![second.clone()]);

    let (status, body) = server.command(&second, "stop", &key).await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    let (status, stderr) = agent.exit().await;
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(server.session_ids(&key).await.is_empty());
    let (status, _) = server
        .get(&format!("/tunnel_sessions/{second}"), &key)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

/// A reader gone from the agent's stdout (a log shipper restarting, `| head`) does not end the
/// agent: its lines are dropped, it goes on obeying commands (a restart, whose lines meet the
/// broken pipe before and after it re-executes), and a stop still exits 0.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_stdout_does_not_end_the_agent() {
    let server = server().await;
    let key = server.account().await;
    let (_, token) = server.credential(&key, &[]).await;
    let mut agent = Agent::spawn(&server, &token, &[]);
    let first = agent.session().await;
    agent.close_stdout().await;
    let (status, body) = server.command(&first, "restart", &key).await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let second = loop {
        let ids = server.session_ids(&key).await;
        if let [id] = ids.as_slice()
            && *id != first
        {
            break id.clone();
        }
        assert!(agent.running(), "the agent ended");
        assert!(tokio::time::Instant::now() < deadline, "{ids:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let (status, body) = server.command(&second, "stop", &key).await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    let (status, stderr) = agent.exit().await;
    assert_eq!(status.code(), Some(0), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn update_refusals_and_a_successful_update_then_restart() {
    let server = server().await;
    let key = server.account().await;
    let (_, token) = server.credential(&key, &[]).await;

    // Already at the newest 3.x: nothing to update to.
    let mut latest = Agent::spawn(&server, &token, &["--report-version", "3.4.1"]);
    let id = latest.session().await;
    let (status, body) = server.command(&id, "update", &key).await;
    assert_error(status, &body, ErrorCode::NoUpdateAvailable);

    // Never across a major version: 4.x has no 4.x release in the catalogue.
    let mut next_major = Agent::spawn(&server, &token, &["--report-version", "4.0.0"]);
    let id = next_major.session().await;
    let (status, body) = server.command(&id, "update", &key).await;
    assert_error(status, &body, ErrorCode::NoUpdateAvailable);

    // Update checks disabled.
    let mut disabled = Agent::spawn(
        &server,
        &token,
        &["--report-version", "3.4.0", "--no-update-check"],
    );
    let id = disabled.session().await;
    let (status, body) = server.command(&id, "update", &key).await;
    assert_error(status, &body, ErrorCode::UpdateChecksDisabled);
    // The same from the environment, in any of the usual spellings of "on".
    for on in ["1", "yes", "true"] {
        let mut disabled = Agent::spawn_with_env(
            &server.url(),
            &token,
            &["--report-version", "3.4.0"],
            &[("TUNNEL_AGENT_NO_UPDATE_CHECK", on)],
        );
        let id = disabled.session().await;
        let (status, body) = server.command(&id, "update", &key).await;
        assert_error(status, &body, ErrorCode::UpdateChecksDisabled);
    }

    // The full cycle: update, refused while updating, refused once updated, restart, new version.
    let mut agent = Agent::spawn(&server, &token, &["--report-version", "3.4.0"]);
    let id = agent.session().await;
    let (status, body) = server.command(&id, "update", &key).await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    let (status, body) = server.command(&id, "update", &key).await;
    assert_error(status, &body, ErrorCode::UpdateInProgress);
    let target = agent
        .wait_line("update complete", |l| {
            l.strip_prefix("updated to ").map(str::to_owned)
        })
        .await;
    assert_eq!(target, "3.4.1; restart pending");
    let (status, body) = server.command(&id, "update", &key).await;
    assert_error(status, &body, ErrorCode::UpdatedNotRestarted);
    // Until the restart, the session still reports the version it started with.
    let (_, s) = server.get(&format!("/tunnel_sessions/{id}"), &key).await;
    assert_eq!(s["agent_version"], "3.4.0");

    let (status, body) = server.restart_after_update(&id, &key).await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    let new_id = agent.session().await;
    assert_ne!(new_id, id);
    let (_, s) = server
        .get(&format!("/tunnel_sessions/{new_id}"), &key)
        .await;
    assert_eq!(s["agent_version"], "3.4.1");
    // Now at the newest: no further update, and a second restart keeps the new version.
    let (status, body) = server.command(&new_id, "update", &key).await;
    assert_error(status, &body, ErrorCode::NoUpdateAvailable);
    let (status, _) = server.command(&new_id, "restart", &key).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let third = agent.session().await;
    let (_, s) = server.get(&format!("/tunnel_sessions/{third}"), &key).await;
    assert_eq!(s["agent_version"], "3.4.1");

    // A 2.x agent updates within major 2 (2.9.0), not to 3.4.1.
    let mut old = Agent::spawn(&server, &token, &["--report-version", "2.1.0"]);
    let id = old.session().await;
    assert_eq!(
        server.command(&id, "update", &key).await.0,
        StatusCode::NO_CONTENT
    );
    old.wait_line("update complete", |l| {
        l.starts_with("updated to 2.9.0").then_some(())
    })
    .await;
    assert_eq!(
        server.restart_after_update(&id, &key).await.0,
        StatusCode::NO_CONTENT
    );
    let id = old.session().await;
    let (_, s) = server.get(&format!("/tunnel_sessions/{id}"), &key).await;
    assert_eq!(s["agent_version"], "2.9.0");
}

/// The `Retry-After` of a 409, which must equal `details.retry_after_secs`.
fn retry_after(headers: &HeaderMap, body: &Value) -> u64 {
    let secs: u64 = headers[RETRY_AFTER].to_str().unwrap().parse().unwrap();
    assert_eq!(body["details"]["retry_after_secs"], secs, "{body}");
    secs
}

/// The restart-after-update rule with the server's real 10 s wait: during the update, and right
/// after it, restart is a 409 with its own code, the seconds left and `Retry-After`; once the
/// wait is over it goes through and the new session runs the new version.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restart_waits_for_the_update_and_ten_seconds_after_it() {
    let timings = Timings {
        update_restart_wait: Timings::default().update_restart_wait,
        ..fast_timings()
    };
    assert_eq!(
        timings.update_restart_wait.as_secs(),
        UPDATE_RESTART_WAIT_SECS
    );
    let server = Server::start("3.4.1", "local", timings).await;
    let key = server.account().await;
    let (_, token) = server.credential(&key, &[]).await;
    let mut agent = Agent::spawn(&server, &token, &["--report-version", "3.4.0"]);
    let id = agent.session().await;
    let path = format!("/tunnel_sessions/{id}");
    let restart = format!("{path}/restart");
    let (_, s) = server.get(&path, &key).await;
    assert_eq!(s["agent_update_state"], Value::Null, "{s}");

    // During the update (2 s in these tests): the server knew before it answered 204.
    let (status, body) = server.command(&id, "update", &key).await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    let (_, s) = server.get(&path, &key).await;
    assert_eq!(
        s["agent_update_state"],
        json!({"state": "updating", "target": "3.4.1"})
    );
    let (status, headers, body) = server
        .call_with_headers(Method::POST, &restart, &key, None)
        .await;
    assert_error(status, &body, ErrorCode::RestartDuringUpdate);
    assert!((1..=2).contains(&retry_after(&headers, &body)), "{body}");
    assert!(
        body["msg"]
            .as_str()
            .unwrap()
            .contains("applying its update to 3.4.1"),
        "{body}"
    );
    assert_eq!(body["details"]["session_id"], id.as_str());
    assert!(agent.running(), "the refused restart reached no agent");

    // Right after it: the 10 s count, rounded up to whole seconds. The server records the
    // agent's report a moment after the agent prints it.
    agent
        .wait_line("update complete", |l| {
            l.starts_with("updated to 3.4.1").then_some(())
        })
        .await;
    server.wait_update_state(&id, &key, "updated").await;
    let (status, headers, body) = server
        .call_with_headers(Method::POST, &restart, &key, None)
        .await;
    assert_error(status, &body, ErrorCode::RestartTooSoon);
    let secs = retry_after(&headers, &body);
    assert!((8..=10).contains(&secs), "{secs} s left: {body}");
    let msg = body["msg"].as_str().unwrap();
    assert!(msg.contains("less than 10 seconds ago"), "{msg}");
    assert!(
        msg.contains(&format!("restart it in {secs} seconds")),
        "{msg}"
    );
    let (_, s) = server.get(&path, &key).await;
    let state = &s["agent_update_state"];
    assert_eq!(state["state"], "updated", "{s}");
    assert_eq!(state["version"], "3.4.1", "{s}");
    let left = state["restart_available_in_secs"].as_u64().unwrap();
    assert!(left <= secs && left + 1 >= secs, "{left} vs {secs}");
    // Listed the same way.
    let (_, list) = server.get("/tunnel_sessions", &key).await;
    assert_eq!(
        list["tunnel_sessions"][0]["agent_update_state"]["state"],
        "updated"
    );

    // After the wait the restart goes through and the new session reports the new version.
    tokio::time::sleep(Duration::from_secs(secs)).await;
    let (_, s) = server.get(&path, &key).await;
    assert_eq!(
        s["agent_update_state"]["restart_available_in_secs"], 0,
        "{s}"
    );
    let (status, body) = server.command(&id, "restart", &key).await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    let new_id = agent.session().await;
    let (_, s) = server
        .get(&format!("/tunnel_sessions/{new_id}"), &key)
        .await;
    assert_eq!(s["agent_version"], "3.4.1", "{s}");
    assert_eq!(s["agent_update_state"], Value::Null, "{s}");
    // With no update pending, restart is never held back.
    let (status, body) = server.command(&new_id, "restart", &key).await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restart_is_refused_on_windows() {
    let server = server().await;
    let key = server.account().await;
    let (_, token) = server.credential(&key, &[]).await;
    let mut agent = Agent::spawn(&server, &token, &["--report-os", "Windows 11"]);
    let id = agent.session().await;
    let (status, body) = server.command(&id, "restart", &key).await;
    assert_error(status, &body, ErrorCode::RestartUnsupported);
    // Refused by the server before anything was sent: the audit log records nothing.
    let (_, log) = server
        .get(
            &format!("/events?type=tunnel_session_restart_requested.v0&object_id={id}"),
            &key,
        )
        .await;
    assert_eq!(log["events"], serde_json::json!([]), "{log}");
    // Still the same session; stop works.
    let (status, s) = server.get(&format!("/tunnel_sessions/{id}"), &key).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(s["os"], "Windows 11");
    server.stop_agent(&mut agent, &id, &key).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_the_credential_disconnects_its_sessions() {
    let server = server().await;
    let key = server.account().await;
    let (doomed, token) = server.credential(&key, &[]).await;
    let (_, other_token) = server.credential(&key, &[]).await;
    let mut agent = Agent::spawn(&server, &token, &[]);
    let mut bystander = Agent::spawn(&server, &other_token, &[]);
    let id = agent.session().await;
    let other = bystander.session().await;

    let (status, body) = server
        .call(
            Method::DELETE,
            &format!("/credentials/{doomed}"),
            &key,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    let (status, stderr) = agent.exit().await;
    // The agent's own account of the session (connects, losses) says why, should it not be 5.
    let stdout = agent.all_lines().await;
    assert_eq!(status.code(), Some(5), "{stderr}\nstdout: {stdout:?}");
    assert!(
        stderr.contains(ErrorCode::CredentialDeleted.as_str()),
        "{stderr}"
    );
    let (status, _) = server.get(&format!("/tunnel_sessions/{id}"), &key).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(server.session_ids(&key).await, vec![other]);

    // The deleted credential's token no longer opens a session.
    let mut again = Agent::spawn(&server, &token, &[]);
    assert_eq!(again.exit().await.0.code(), Some(3));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn narrowing_the_acl_disconnects_exactly_the_agents_it_refuses() {
    let server = server().await;
    let key = server.account().await;
    let (credential, token) = server.credential(&key, &["bind:*.example.com"]).await;
    let mut kept = Agent::spawn(&server, &token, &["--bind", "api.example.com"]);
    let mut refused = Agent::spawn(&server, &token, &["--bind", "web.example.com"]);
    let kept_id = kept.session().await;
    let refused_id = refused.session().await;
    let path = format!("/credentials/{credential}");
    let patch = async |body: Value| {
        let body = body.to_string();
        let (status, answer) = server.call(Method::PATCH, &path, &key, Some(&body)).await;
        assert_eq!(status, StatusCode::OK, "{answer}");
    };

    // A description, the same ACL, a wider ACL: both agents keep their sessions.
    patch(serde_json::json!({"description": "renamed"})).await;
    patch(serde_json::json!({"acl": ["bind:*.example.com"]})).await;
    patch(serde_json::json!({"acl": ["bind:*.example.com", "bind:env=prod"]})).await;
    let mut both = vec![kept_id.clone(), refused_id.clone()];
    both.sort_unstable_by(|a, b| b.cmp(a));
    assert_eq!(server.session_ids(&key).await, both);
    assert!(kept.running() && refused.running());

    // Narrowed: the agent binding `web.example.com` is told why and exits 4 at once.
    patch(serde_json::json!({"acl": ["bind:api.example.com"]})).await;
    let (status, stderr) = refused.exit().await;
    let stdout = refused.all_lines().await;
    assert_eq!(status.code(), Some(4), "{stderr}\nstdout: {stdout:?}");
    assert!(
        stderr.contains(ErrorCode::BindNotPermitted.as_str()),
        "{stderr}"
    );
    assert!(
        stderr.contains("does not permit binding `web.example.com`"),
        "{stderr}"
    );
    assert!(
        !stderr.contains(&token),
        "the authtoken must never be printed"
    );
    server
        .wait_session_status(&refused_id, &key, StatusCode::NOT_FOUND)
        .await;
    // The agent the new ACL still admits keeps the same session.
    assert!(kept.running());
    assert_eq!(server.session_ids(&key).await, vec![kept_id.clone()]);
    server.stop_agent(&mut kept, &kept_id, &key).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_account_can_neither_see_nor_command_a_session() {
    let server = server().await;
    let key = server.account().await;
    let stranger = server.account().await;
    let (_, token) = server.credential(&key, &[]).await;
    let mut agent = Agent::spawn(&server, &token, &[]);
    let id = agent.session().await;

    assert!(server.session_ids(&stranger).await.is_empty());
    let (status, body) = server
        .get(&format!("/tunnel_sessions/{id}"), &stranger)
        .await;
    assert_error(status, &body, ErrorCode::NotFound);
    for command in ["restart", "stop", "update"] {
        let (status, body) = server.command(&id, command, &stranger).await;
        assert_error(status, &body, ErrorCode::NotFound);
    }
    // The owner still sees the same, untouched session.
    assert!(agent.running());
    assert_eq!(server.session_ids(&key).await, vec![id]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_command_line_fails_fast() {
    let server = server().await;
    let mut agent = Agent::spawn(&server, "tok", &["--bind", "not a domain"]);
    let (status, stderr) = agent.exit().await;
    assert_eq!(status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("not a domain"), "{stderr}");
    let mut agent = Agent::spawn(&server, "tok", &["--label", "prod"]);
    let (status, stderr) = agent.exit().await;
    assert_eq!(status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("key=value"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hello_the_server_would_refuse_fails_before_connecting() {
    let server = server().await;
    let key = server.account().await;
    let (_, token) = server.credential(&key, &[]).await;
    let metadata = "m".repeat(4097);
    let too_many: Vec<String> = (0..101)
        .flat_map(|i| ["--label".to_owned(), format!("k{i}=v")])
        .collect();
    let too_many: Vec<&str> = too_many.iter().map(String::as_str).collect();
    let cases: [(&[&str], &str); 4] = [
        (
            &["--metadata", &metadata],
            "metadata must be at most 4096 bytes",
        ),
        (
            &["--report-os", &"o".repeat(65)],
            "os must be at most 64 bytes",
        ),
        (&too_many, "at most 100 binds"),
        (&["--report-version", "3.4"], "MAJOR.MINOR.PATCH"),
    ];
    for (args, needle) in cases {
        let mut agent = Agent::spawn(&server, &token, args);
        let (status, stderr) = agent.exit().await;
        // 2 (bad configuration), not 6 (refused by the server): it never got that far.
        assert_eq!(status.code(), Some(2), "{needle}: {stderr}");
        assert!(stderr.contains(needle), "{needle}: {stderr}");
        let lines = agent.all_lines().await;
        assert!(lines.is_empty(), "{lines:?}");
    }
    let mut agent = Agent::spawn_to("ftp://127.0.0.1:1", &token, &[]);
    let (status, stderr) = agent.exit().await;
    assert_eq!(status.code(), Some(2), "{stderr}");
    // A port that is no port is refused, not replaced by the default one (which would send the
    // authtoken elsewhere); so is a query, which would end up inside the channel's path.
    let port = server.url().rsplit_once(':').unwrap().1.to_owned();
    for (server_url, needle) in [
        ("http://127.0.0.1:99999".to_owned(), "port"),
        ("http://127.0.0.1:abc".to_owned(), "port"),
        ("http://127.0.0.1:".to_owned(), "port"),
        (format!("http://127.0.0.1:{port}?tok=abc"), "query"),
    ] {
        let mut agent = Agent::spawn_to(&server_url, &token, &[]);
        let (status, stderr) = agent.exit().await;
        assert_eq!(status.code(), Some(2), "{server_url}: {stderr}");
        assert!(stderr.contains(needle), "{server_url}: {stderr}");
    }
    assert!(server.session_ids(&key).await.is_empty());
}

/// An address that answers but is not the agent channel (a path under which nothing serves
/// it): each attempt says what was answered and what to check, rather than a bare HTTP error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_address_that_is_not_the_agent_channel_says_so() {
    let server = server().await;
    let key = server.account().await;
    let (_, token) = server.credential(&key, &[]).await;
    let mut agent = Agent::spawn_to(&format!("{}/elsewhere", server.url()), &token, &[]);
    let reason = agent
        .wait_line("a failed attempt", |l| {
            l.strip_prefix("connection lost (").map(str::to_owned)
        })
        .await;
    assert!(
        reason.contains("instead of opening the agent channel"),
        "{reason}"
    );
    assert!(reason.contains("--server"), "{reason}");
    agent.kill().await;
}
