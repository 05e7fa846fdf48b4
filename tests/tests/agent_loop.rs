//! Flow 3: a real agent with a credential created through the API appears in the console;
//! restart gives a new session id; update succeeds (the server knows a newer version of the same
//! major) and restart stays disabled while the update runs and for 10 seconds after it, with a
//! countdown that comes from the server (a reload in the middle keeps it), and the server itself
//! refuses an early restart; a second update shows the agent's refusal; the restart after the
//! wait brings the agent up on the new version; stop ends the agent process with status 0 and
//! the row disappears.

use serde_json::{Value, json};
use std::time::Duration;
use tunnel_e2e::api::Api;
use tunnel_e2e::harness::{Agent, Stack};
use tunnel_e2e::pages::{self, eventually, tunnel_sessions};

/// Waits until exactly one session is online and it is not `previous`.
async fn one_session_other_than(api: &Api, previous: Option<&str>) -> anyhow::Result<String> {
    api.wait_sessions("a new tunnel session", |ids| match ids.as_slice() {
        [only] if Some(only.as_str()) != previous => Some(only.clone()),
        _ => None,
    })
    .await
}

#[tokio::test]
async fn agent_sessions_restart_update_and_stop_from_the_console() -> anyhow::Result<()> {
    let stack = Stack::start(&["--agent-latest", "3.4.1,2.9.0"])?;
    let (server, api) = (&stack.server, &stack.api);
    let credential = api
        .create(
            "/credentials",
            json!({"description": "e2e agent", "acl": ["bind:*.example.com"]}),
        )
        .await?;
    let token = credential["token"].as_str().unwrap_or_default();
    let mut agent = Agent::start(
        server,
        token,
        &["--bind", "app.example.com", "--report-version", "3.4.0"],
    )?;

    let first = one_session_other_than(api, None).await?;
    let browser = stack.signed_in_browser().await?;
    let client = &browser.client;
    tunnel_sessions::open_list(client).await?;
    pages::wait_for_text(client, &first).await?;
    pages::wait_for_text(client, "3.4.0").await?;
    browser.screenshot("sessions-list").await?;

    // Restart: back to the list, where a new session id replaces the old one.
    tunnel_sessions::open(client, &first).await?;
    // Its credential by name, as in the list.
    pages::wait_for_text(client, "e2e agent").await?;
    browser.screenshot("session-detail").await?;
    tunnel_sessions::command(client, "Restart").await?;
    let second = one_session_other_than(api, Some(&first)).await?;
    pages::wait_for_text(client, &second).await?;
    eventually("the old session to leave the list", || async {
        Ok((!pages::page_text(client).await?.contains(&first)).then_some(()))
    })
    .await?;

    // Update: accepted, then restart is held back with a visible countdown.
    tunnel_sessions::open(client, &second).await?;
    tunnel_sessions::command(client, "Update").await?;
    pages::wait_for_text(client, "Restart is available in").await?;
    assert!(
        !tunnel_sessions::button_enabled(client, "Restart").await?,
        "restart is disabled after an update"
    );
    browser.screenshot("session-update-countdown").await?;
    // The wait is the server's: any client is refused, with the seconds left.
    let restart = format!("/tunnel_sessions/{second}/restart");
    let (status, body): (u16, Value) = api.post(&restart, json!({})).await?;
    assert_eq!(status, 409, "{body}");
    assert!(
        ["ERR_TUNNEL_146", "ERR_TUNNEL_147"].contains(&body["error_code"].as_str().unwrap_or("")),
        "{body}"
    );
    assert!(
        body["details"]["retry_after_secs"].as_u64().is_some(),
        "{body}"
    );
    // A reload in the middle of the wait keeps the countdown: it comes from the session.
    client.refresh().await?;
    pages::wait_for_text(client, "Agent commands").await?;
    pages::wait_for_text(client, "Restart is available in").await?;
    assert!(
        !tunnel_sessions::button_enabled(client, "Restart").await?,
        "restart is still disabled after a reload"
    );
    // A second update would be refused by the agent (updating, or updated and not restarted):
    // the console does not offer it, and the API answers it with the agent's refusal.
    assert!(
        !tunnel_sessions::button_enabled(client, "Update").await?,
        "update is disabled until the agent restarts"
    );
    let (status, body): (u16, Value) = api
        .post(&format!("/tunnel_sessions/{second}/update"), json!({}))
        .await?;
    assert_eq!(status, 409, "{body}");
    assert!(
        ["ERR_TUNNEL_143", "ERR_TUNNEL_144"].contains(&body["error_code"].as_str().unwrap_or("")),
        "{body}"
    );
    // After the wait, restart is available again, and brings the agent up on the new version.
    eventually("restart to be enabled again after 10 s", || async {
        Ok(tunnel_sessions::button_enabled(client, "Restart")
            .await?
            .then_some(()))
    })
    .await?;
    tunnel_sessions::command(client, "Restart").await?;
    let third = one_session_other_than(api, Some(&second)).await?;
    let (_, session): (u16, Value) = api.get(&format!("/tunnel_sessions/{third}")).await?;
    assert_eq!(session["agent_version"], "3.4.1", "{session}");
    assert_eq!(session["agent_update_state"], Value::Null, "{session}");
    pages::wait_for_text(client, &third).await?;
    tunnel_sessions::open(client, &third).await?;
    pages::wait_for_text(client, "Agent version 3.4.1").await?;

    // Stop: the agent exits with 0 and the session leaves the list.
    tunnel_sessions::command(client, "Stop").await?;
    let status = agent.process.wait_exit(Duration::from_secs(15))?;
    assert!(status.success(), "the agent exits 0 on stop: {status}");
    pages::wait_for_text(client, "No tunnel sessions online").await?;
    assert_eq!(api.session_ids().await?, Vec::<String>::new());
    for gone in [&second, &third] {
        let (status, _): (u16, Value) = api.get(&format!("/tunnel_sessions/{gone}")).await?;
        assert_eq!(status, 404);
    }

    // A session that ends while its page is open: the page says so, the focus (here in the
    // stop confirmation the ending takes away) goes to that sentence, and the page stops
    // asking for a session that cannot come back.
    let mut last = Agent::start(server, token, &["--bind", "app.example.com"])?;
    let fourth = one_session_other_than(api, Some(&third)).await?;
    pages::wait_for_text(client, &fourth).await?;
    tunnel_sessions::open(client, &fourth).await?;
    pages::click_button(client, "Stop").await?;
    pages::wait_focus_in_dialog(client, "the stop confirmation").await?;
    let (status, _): (u16, Value) = api
        .post(&format!("/tunnel_sessions/{fourth}/stop"), json!({}))
        .await?;
    assert_eq!(status, 204);
    last.process.wait_exit(Duration::from_secs(15))?;
    pages::wait_for_text(client, "No session with this id is online").await?;
    pages::wait_for_text(client, "Not online").await?;
    pages::wait_for_focus(client, "p.empty.session-ended").await?;
    assert!(pages::page_text(client).await?.contains("Back to Sessions"));
    let asked = "return performance.getEntriesByType('resource')
                   .filter(e => e.name.endsWith(arguments[0])).length;";
    let before = client.execute(asked, vec![json!(fourth)]).await?;
    tokio::time::sleep(Duration::from_secs(7)).await;
    let after = client.execute(asked, vec![json!(fourth)]).await?;
    assert_eq!(
        before, after,
        "no request for the ended session in 7 s (refresh every 3 s)"
    );
    browser.close().await?;
    Ok(())
}

/// The server out of reach while a session's page refreshes itself: the page keeps what it
/// shows, its open Stop confirmation and the focus in it, and a bar says that the refresh
/// failed. It had turned into an error box, closing the dialog and dropping the focus.
#[tokio::test]
async fn a_refresh_without_an_answer_keeps_the_page_and_its_dialog() -> anyhow::Result<()> {
    let mut stack = Stack::start(&[])?;
    let credential = stack
        .api
        .create("/credentials", json!({"description": "e2e blip"}))
        .await?;
    let token = credential["token"].as_str().unwrap_or_default();
    let _agent = Agent::start(&stack.server, token, &["--bind", "app.example.com"])?;
    let id = one_session_other_than(&stack.api, None).await?;
    let browser = stack.signed_in_browser().await?;
    let client = &browser.client;
    tunnel_sessions::open_list(client).await?;
    pages::wait_for_text(client, &id).await?;
    tunnel_sessions::open(client, &id).await?;
    pages::click_button(client, "Stop").await?;
    pages::wait_focus_in_dialog(client, "the stop confirmation").await?;

    stack.server.stop();
    pages::wait_for_text(client, "Could not refresh").await?;
    browser.screenshot("session-refresh-failed").await?;
    assert!(
        pages::focus_in_dialog(client).await?,
        "the focus stays in the stop confirmation"
    );
    let text = pages::page_text(client).await?;
    assert!(text.contains("Agent commands"), "{text}");
    assert!(!text.contains("Could not load"), "{text}");
    browser.close().await?;
    Ok(())
}
