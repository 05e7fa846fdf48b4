//! A changed ACL: narrowing a credential's ACL in the console disconnects, at once, the connected agent
//! whose bind the new ACL refuses (it exits with status 4) and leaves the one it still permits
//! online with the same session.

use serde_json::json;
use std::time::Duration;
use tunnel_e2e::api::id;
use tunnel_e2e::harness::{Agent, Stack};
use tunnel_e2e::pages::{self, credentials, lists, tunnel_sessions};

#[tokio::test]
async fn a_narrowed_acl_disconnects_only_the_agents_it_refuses() -> anyhow::Result<()> {
    let stack = Stack::start(&[])?;
    let (server, api) = (&stack.server, &stack.api);
    let credential = api
        .create(
            "/credentials",
            json!({"description": "e2e shared", "acl": ["bind:*.example.com"]}),
        )
        .await?;
    let credential_id = id(&credential);
    let token = credential["token"].as_str().unwrap_or_default();
    let mut kept = Agent::start(server, token, &["--bind", "api.example.com"])?;
    let mut refused = Agent::start(server, token, &["--bind", "web.example.com"])?;
    let online = api
        .wait_sessions("both agents online", |ids| (ids.len() == 2).then_some(ids))
        .await?;

    let browser = stack.signed_in_browser().await?;
    let client = &browser.client;
    credentials::open_list(client).await?;
    lists::open_row(client, &credential_id).await?;
    pages::click_button(client, "Edit").await?;
    credentials::set_rule(client, 1, "bind:api.example.com").await?;
    // The form says what saving will do before it is done.
    pages::wait_for_text(client, "A changed ACL applies at once").await?;
    browser.screenshot("credential-acl-narrowed").await?;
    pages::click_button(client, "Save changes").await?;
    pages::wait_for_text(client, "Credential saved.").await?;

    let status = refused.process.wait_exit(Duration::from_secs(15))?;
    assert_eq!(
        status.code(),
        Some(4),
        "the refused agent exits 4: {status}"
    );
    assert!(kept.process.is_running(), "the permitted agent stays");
    let left = api.session_ids().await?;
    assert_eq!(left.len(), 1);
    assert!(online.contains(&left[0]), "the same session, not a new one");
    let (_, session) = api.get(&format!("/tunnel_sessions/{}", left[0])).await?;
    assert_eq!(session["credential"]["id"], credential_id);

    // The sessions page shows the one left.
    tunnel_sessions::open_list(client).await?;
    pages::wait_for_text(client, &left[0]).await?;
    let gone: Vec<_> = online.iter().filter(|s| **s != left[0]).collect();
    assert!(!pages::page_text(client).await?.contains(gone[0].as_str()));
    browser.close().await?;
    Ok(())
}
