//! Backends and TLS edges as an admin maintains them: a backend created from its own page
//! lists the live tunnel of an agent carrying its label (and the credential's page lists that
//! session too); editing the labels changes what it selects; an edge's description and
//! host:ports are edited from its page; a backend in use cannot be deleted (the API's 409 is
//! shown); the backend picker finds backends by search.

use fantoccini::{Client, Locator};
use serde_json::json;
use tunnel_e2e::api::id;
use tunnel_e2e::harness::{Agent, Stack};
use tunnel_e2e::pages::{self, backends, eventually};

/// The texts of the options of the backend picker.
async fn picker_options(client: &Client) -> anyhow::Result<Vec<String>> {
    let options = client
        .execute(
            "return [...document.querySelectorAll('#field-backend_id option')].map(o => o.innerText);",
            vec![],
        )
        .await?;
    Ok(options
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|o| o.as_str().map(str::to_owned))
        .collect())
}

#[tokio::test]
async fn backends_and_edges_are_maintained_from_their_pages() -> anyhow::Result<()> {
    let stack = Stack::start(&[])?;
    let (server, api) = (&stack.server, &stack.api);
    let credential = api
        .create("/credentials", json!({"description": "labelled agent"}))
        .await?;
    let token = credential["token"].as_str().unwrap_or_default();
    let _agent = Agent::start(server, token, &["--label", "env=prod"])?;
    let session = api
        .wait_sessions("the agent's session", |ids| ids.into_iter().next())
        .await?;

    let browser = stack.signed_in_browser().await?;
    let client = &browser.client;
    backends::open_list(client).await?;
    pages::wait_for_text(client, "No backends yet.").await?;
    backends::create(client, "prod pool", "env=prod").await?;
    let backend = eventually("the backend", || async {
        let ids = api.ids("/backends/tunnel_group", "backends").await?;
        Ok(ids.first().cloned())
    })
    .await?;
    // Its page lists the agent's live tunnel, linked to the session.
    pages::wait_for_text(client, &session).await?;
    browser.screenshot("backend-detail").await?;

    // The credential's page lists the same session.
    client
        .goto(&format!("{}/credentials/{}", server.url(), id(&credential)))
        .await?;
    pages::wait_for_text(client, "Live tunnel sessions").await?;
    pages::wait_for_text(client, &session).await?;

    // Labels edited: the backend no longer selects the agent.
    client
        .goto(&format!("{}/backends/{backend}", server.url()))
        .await?;
    pages::wait_for_text(client, &session).await?;
    backends::edit(client, "Labels", "env=dev").await?;
    pages::wait_for_text(client, "None online").await?;
    let (_, fetched) = api
        .get(&format!("/backends/tunnel_group/{backend}"))
        .await?;
    assert_eq!(fetched["labels"], json!({"env": "dev"}));
    assert_eq!(
        fetched["description"], "prod pool",
        "only the labels were sent"
    );

    // An edge using it: editable from its page; the backend cannot be deleted meanwhile.
    let edge = id(&api
        .create(
            "/edges/tls",
            json!({"description": "web", "hostports": ["web.example.com:443"],
                   "backend": {"backend_id": backend}}),
        )
        .await?);
    client
        .goto(&format!("{}/tls-edges/{edge}", server.url()))
        .await?;
    pages::wait_for_text(client, "Backend module").await?;
    backends::edit(
        client,
        "Host:ports",
        "web.example.com:443, www.example.com:443",
    )
    .await?;
    pages::wait_for_text(client, "www.example.com:443").await?;
    let (_, fetched) = api.get(&format!("/edges/tls/{edge}")).await?;
    assert_eq!(
        fetched["hostports"],
        json!(["web.example.com:443", "www.example.com:443"])
    );
    assert_eq!(fetched["description"], "web");

    // The edge names its backend; renamed on its page, the backend shows its new name on the
    // edge's page at once, back there without a reload.
    pages::wait_for_text(client, "prod pool").await?;
    client
        .find(fantoccini::Locator::LinkText("prod pool"))
        .await?
        .click()
        .await?;
    pages::wait_for_text(client, "Tunnels online").await?;
    backends::edit(client, "Description", "prod pool (renamed)").await?;
    client.back().await?;
    pages::wait_for_text(client, "Backend module").await?;
    // The module's backend by name (the picker below it lists the backends afresh anyway).
    pages::eventually("the backend's new name on the edge", || async {
        let name = client
            .execute(
                "const n = document.querySelector('main dd .ref-name .name'); \
                 return n ? n.innerText : null;",
                vec![],
            )
            .await?;
        Ok((name.as_str() == Some("prod pool (renamed)")).then_some(()))
    })
    .await?;

    client
        .goto(&format!("{}/backends/{backend}", server.url()))
        .await?;
    pages::wait_for_text(client, "Tunnels online").await?;
    pages::click_button(client, "Delete").await?;
    pages::click_in_dialog(client, "Delete backend").await?;
    pages::wait_for_text(client, "The backend was not deleted").await?;
    // The dialog gave the focus back to Delete, which kept it while the delete ran.
    pages::wait_for_focus(client, "button.danger \"Delete\"").await?;
    let (status, _) = api
        .get(&format!("/backends/tunnel_group/{backend}"))
        .await?;
    assert_eq!(status, 200, "still there");
    // The edge using it is a link to its page, from the error.
    let link = client
        .find(fantoccini::Locator::Css("p.error-used-by a"))
        .await?;
    assert_eq!(link.text().await?, edge);
    assert_eq!(
        link.attr("href").await?.as_deref(),
        Some(format!("/tls-edges/{edge}").as_str())
    );

    // The picker searches: of two more backends, only the one matching is offered.
    for description in ["alpha pool", "beta pool"] {
        api.create(
            "/backends/tunnel_group",
            json!({"description": description}),
        )
        .await?;
    }
    client
        .goto(&format!("{}/tls-edges/{edge}", server.url()))
        .await?;
    pages::wait_for_text(client, "Backend module").await?;
    eventually("every backend offered", || async {
        let options = picker_options(client).await?;
        Ok((options.iter().filter(|o| o.contains("pool")).count() == 3).then_some(()))
    })
    .await?;
    pages::fill(client, "Find backends by id, description or label", "beta").await?;
    eventually(
        "only beta offered (and the chosen one kept, by name)",
        || async {
            let options = picker_options(client).await?;
            let found: Vec<&String> = options
                .iter()
                .filter(|o| o.contains("pool") && !o.contains("prod pool"))
                .collect();
            let kept = options.iter().any(|o| o.contains("prod pool (renamed)"));
            Ok((kept && found.len() == 1 && found[0].contains("beta pool")).then_some(()))
        },
    )
    .await?;
    let chosen = client
        .find(Locator::Css("#field-backend_id"))
        .await?
        .prop("value")
        .await?;
    assert_eq!(
        chosen.as_deref(),
        Some(backend.as_str()),
        "the module's backend stays chosen"
    );
    browser.close().await?;
    Ok(())
}

/// A slow create left for another page: the user stays where they went, typing there, and
/// that page keeps its place in the history; the toast says the backend was created.
#[tokio::test]
async fn a_slow_create_leaves_a_user_who_moved_on_where_they_are() -> anyhow::Result<()> {
    let (stack, browser) = tunnel_e2e::harness::Stack::signed_in(&[]).await?;
    let client = &browser.client;
    backends::open_list(client).await?;
    pages::click_button(client, "New backend").await?;
    pages::fill(client, "Description", "slow pool").await?;
    pages::delay_requests(client, "POST", 2000).await?;
    pages::click_button(client, "Create backend").await?;
    pages::open_from_navigation(client, "Credentials", "Authtokens that tunnel agents use").await?;
    pages::fill(client, "Search credentials", "typed meanwhile").await?;
    pages::wait_for_text(client, "created.").await?;
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let url = client.current_url().await?;
    assert_eq!(url.path(), "/credentials", "{url}");
    let typed = pages::field(client, "Search credentials")
        .await?
        .prop("value")
        .await?;
    assert_eq!(typed.as_deref(), Some("typed meanwhile"));
    let (_, listed) = stack.api.get("/backends/tunnel_group").await?;
    assert_eq!(
        listed["backends"].as_array().map(Vec::len),
        Some(1),
        "{listed}"
    );
    browser.close().await?;
    Ok(())
}
