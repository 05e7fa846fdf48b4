//! Every page survives a reload with a warm cache (the browser revalidates and gets 304s), back
//! and forward; each route has its own title; after a route change focus is on the new page's
//! heading, unless it was put on the new page first; the skip link goes to the content.

use fantoccini::Client;
use fantoccini::key::Key;
use serde_json::json;
use tunnel_e2e::api::id;
use tunnel_e2e::harness::Stack;
use tunnel_e2e::pages::{self, eventually, lists};

/// The text of the page's `<h1>` once the console shows one.
async fn heading(client: &Client) -> anyhow::Result<String> {
    eventually("a page heading", || async {
        let h1 = client
            .execute(
                "const h = document.querySelector('main h1, .signin h1'); return h ? h.innerText : null;",
                vec![],
            )
            .await?;
        Ok(h1.as_str().filter(|t| !t.is_empty()).map(str::to_owned))
    })
    .await
}

/// Reloads the page and waits until the new document runs the console again.
async fn reload(client: &Client) -> anyhow::Result<String> {
    client
        .execute("window.__before_reload = true;", vec![])
        .await?;
    client.refresh().await?;
    eventually("the reloaded console", || async {
        let fresh = client
            .execute("return window.__before_reload === undefined;", vec![])
            .await?;
        Ok(fresh.as_bool().unwrap_or(false).then_some(()))
    })
    .await?;
    heading(client).await
}

#[tokio::test]
async fn every_page_survives_a_reload_with_a_warm_cache_and_back_forward() -> anyhow::Result<()> {
    let stack = Stack::start(&[])?;
    let (server, api) = (&stack.server, &stack.api);
    let credential = api
        .create("/credentials", json!({"description": "reload laptop"}))
        .await?;
    let cred_id = id(&credential);
    let edge = api
        .create("/edges/tls", json!({"description": "reload edge"}))
        .await?;
    let edge_id = id(&edge);

    let browser = stack.signed_in_browser().await?;
    let client = &browser.client;
    pages::wait_for_text(client, "Authtokens that tunnel agents use").await?;
    let routes = [
        (
            "/credentials".to_owned(),
            "Credentials",
            "Credentials · Tunnel Console".to_owned(),
        ),
        (
            format!("/credentials/{cred_id}"),
            "reload laptop",
            format!("Credential {cred_id} · Tunnel Console"),
        ),
        (
            "/ssh-cas/new".to_owned(),
            "New SSH certificate authority",
            "New SSH certificate authority · Tunnel Console".to_owned(),
        ),
        (
            "/sessions".to_owned(),
            "Tunnel sessions",
            "Tunnel sessions · Tunnel Console".to_owned(),
        ),
        (
            format!("/tls-edges/{edge_id}"),
            "reload edge",
            format!("TLS edge {edge_id} · Tunnel Console"),
        ),
        (
            "/event-subscriptions/new".to_owned(),
            "New event subscription",
            "New event subscription · Tunnel Console".to_owned(),
        ),
    ];
    for (route, expected_heading, expected_title) in &routes {
        client.goto(&format!("{}{route}", server.url())).await?;
        pages::eventually(&format!("the heading of {route}"), || async {
            Ok((heading(client).await? == *expected_heading).then_some(()))
        })
        .await?;
        // Twice: the first reload revalidates what the first load cached, the second what
        // the reload cached.
        for _ in 0..2 {
            assert_eq!(
                reload(client).await?,
                *expected_heading,
                "reload of {route}"
            );
        }
        assert_eq!(client.title().await?, *expected_title, "title of {route}");
    }
    browser.screenshot("reloaded-tls-edge").await?;

    // Back and forward between a list and a detail page.
    client
        .goto(&format!("{}/credentials", server.url()))
        .await?;
    lists::open_row(client, &cred_id).await?;
    assert_eq!(heading(client).await?, "reload laptop");
    client.back().await?;
    pages::eventually("the list after back", || async {
        Ok((heading(client).await? == "Credentials").then_some(()))
    })
    .await?;
    client.forward().await?;
    pages::eventually("the detail after forward", || async {
        Ok((heading(client).await? == "reload laptop").then_some(()))
    })
    .await?;
    assert_eq!(reload(client).await?, "reload laptop");

    // Signed out, the sign-in screen survives a reload too.
    pages::click_button(client, "Sign out").await?;
    pages::wait_for_text(client, "Sign in").await?;
    assert_eq!(reload(client).await?, "Tunnel Console");
    pages::field(client, "API key").await?;
    browser.close().await?;
    Ok(())
}

#[tokio::test]
async fn route_changes_move_focus_to_the_heading_and_the_skip_link_to_the_content()
-> anyhow::Result<()> {
    let (_stack, browser) = Stack::signed_in(&[]).await?;
    let client = &browser.client;
    pages::wait_for_text(client, "Authtokens that tunnel agents use").await?;
    assert_eq!(heading(client).await?, "Credentials");

    // The first Tab on a freshly loaded page reaches the skip link, which moves focus into
    // the page's content.
    client.refresh().await?;
    pages::wait_for_text(client, "Authtokens that tunnel agents use").await?;
    pages::press(client, Key::Tab).await?;
    assert!(
        pages::focused(client).await?.contains("Skip to content"),
        "{}",
        pages::focused(client).await?
    );
    pages::press(client, Key::Enter).await?;
    pages::wait_for_focus(client, "h1").await?;

    // A nav link moves focus to the new page's heading and the title changes.
    pages::click_button(client, "SSH CAs").await?;
    pages::eventually("focus on the SSH CAs heading", || async {
        let f = pages::focused(client).await?;
        Ok((f.starts_with("h1") && f.contains("SSH certificate authorities")).then_some(()))
    })
    .await?;
    assert_eq!(
        client.title().await?,
        "SSH certificate authorities · Tunnel Console"
    );
    let announced = client
        .execute(
            "return document.getElementById('route-announcer').innerText;",
            vec![],
        )
        .await?;
    assert_eq!(
        announced.as_str(),
        Some("SSH certificate authorities · Tunnel Console")
    );

    // A focus put on the new page before the heading's turn (a fast user, a shortcut) stays
    // there: the heading takes the focus only from the old page.
    client
        .execute(
            "[...document.querySelectorAll('nav a')].find(a => a.textContent.trim() === 'Credentials').click();
             return new Promise(done => { const put = () => {
               const h = document.querySelector('main h1'), search = document.getElementById('list-search');
               if (h && h.textContent === 'Credentials' && search) { search.focus(); done(true); }
               else setTimeout(put, 0);
             }; put(); });",
            vec![],
        )
        .await?;
    tokio::time::sleep(std::time::Duration::from_millis(400)).await;
    let focused = pages::focused(client).await?;
    assert!(focused.starts_with("input#list-search"), "{focused}");
    browser.close().await?;
    Ok(())
}
