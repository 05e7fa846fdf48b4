//! Long valid values (and a long ACL rule being typed) never make a page scroll sideways (at
//! 1280 px and at 375 px), the desktop header is one row (for a named user too), referenced
//! resources are shown by name, the phone header is one row with a menu, the credential list
//! does not shift when its table arrives, and a toast never covers the field a user is in.

use fantoccini::Client;
use serde_json::json;
use tunnel_e2e::api::id;
use tunnel_e2e::harness::{ADMIN_KEY, Browser, Server, Stack};
use tunnel_e2e::pages::{self, credentials, sign_in::sign_in};

/// Opens `route` and checks, once `text` shows, that nothing is wider than the viewport.
async fn check_no_sideways_scroll(
    browser: &Browser,
    server: &Server,
    route: &str,
    text: &str,
    shot: &str,
) -> anyhow::Result<()> {
    let client = &browser.client;
    client.goto(&format!("{}{route}", server.url())).await?;
    pages::wait_for_text(client, text).await?;
    // Let late content (names of references, pickers) arrive.
    tokio::time::sleep(std::time::Duration::from_millis(400)).await;
    let (page, viewport) = pages::page_widths(client).await?;
    browser.screenshot(shot).await?;
    assert!(
        page <= viewport,
        "{route} is {page} px wide in a {viewport} px viewport"
    );
    Ok(())
}

async fn header_height(client: &Client) -> anyhow::Result<f64> {
    let h = client
        .execute(
            "return document.querySelector('header.topbar').getBoundingClientRect().height;",
            vec![],
        )
        .await?;
    Ok(h.as_f64().unwrap_or(0.0))
}

#[tokio::test]
async fn long_values_wrap_and_references_show_names() -> anyhow::Result<()> {
    let stack = Stack::start(&[])?;
    let (server, api) = (&stack.server, &stack.api);
    let long_url = format!(
        "https://hooks.example.com/{}?token={}",
        "segment/".repeat(40),
        "x".repeat(120)
    );
    let destination = api
        .create(
            "/event_destinations",
            json!({"target": {"webhook": {"url": long_url}}, "format": "json"}),
        )
        .await?;
    let dest_id = id(&destination);
    let long_description = "d".repeat(255);
    let subscription = api
        .create(
            "/event_subscriptions",
            json!({"description": long_description, "sources": [{"type": "credential_created.v0"}],
                   "destination_ids": [dest_id]}),
        )
        .await?;
    let sub_id = id(&subscription);
    let host = format!("{}.example.com", "h".repeat(60));
    let edge = api
        .create(
            "/edges/tls",
            json!({"description": "long host edge", "hostports": [format!("{host}:443")]}),
        )
        .await?;
    let edge_id = id(&edge);
    let backend = api
        .create(
            "/backends/tunnel_group",
            json!({"description": format!("named backend https://backend.example.com/{}", "path/".repeat(30)),
                   "labels": {"env": "prod"}}),
        )
        .await?;
    let backend_id = id(&backend);
    api.call(
        hyper::Method::PUT,
        &format!("/edges/tls/{edge_id}/backend"),
        Some(json!({"backend_id": backend_id})),
    )
    .await?;
    api.create(
        "/credentials",
        json!({"description": "x".repeat(255),
               "acl": [format!("bind:*.{}", "a".repeat(60)), "bind:app.example.com", "bind:host.example.com:8443", "bind:env=prod"]}),
    )
    .await?;

    let key = api
        .create(
            "/api_keys",
            json!({"description": "k".repeat(255), "metadata": "m".repeat(4096)}),
        )
        .await?;
    let key_id = id(&key);

    let browser = stack.signed_in_browser().await?;
    let client = &browser.client;

    for (width, height) in [(1280, 900), (375, 740)] {
        pages::set_viewport(client, width, height).await?;
        let pages_to_check = [
            ("/credentials", "bind:app.example.com"),
            ("/event-subscriptions", "credential_created.v0"),
            ("/event-subscriptions/new", "New webhook destination URL"),
            (
                &*format!("/event-subscriptions/{sub_id}"),
                "Only the fields you change are sent",
            ),
            ("/tls-edges", "long host edge"),
            (&*format!("/tls-edges/{edge_id}"), "Backend module"),
            ("/api-keys", "this console"),
            (&*format!("/api-keys/{key_id}"), "Shown only once"),
            ("/users", "The people and bots of this account"),
        ];
        for (route, text) in pages_to_check {
            let shot = format!("layout-{width}{}", route.replace('/', "-"));
            check_no_sideways_scroll(&browser, server, route, text, &shot).await?;
        }
        // A long rule being typed: what the editor says of it wraps too.
        let shot = format!("layout-{width}-credential-new");
        check_no_sideways_scroll(
            &browser,
            server,
            "/credentials/new",
            "Create credential",
            &shot,
        )
        .await?;
        credentials::set_rule(
            client,
            1,
            &format!("bind:{}example.com", "sub-domain.".repeat(18)),
        )
        .await?;
        pages::wait_for_text(client, "permits the domain sub-domain").await?;
        let (page, viewport) = pages::page_widths(client).await?;
        browser
            .screenshot(&format!("layout-{width}-long-rule"))
            .await?;
        assert!(
            page <= viewport,
            "a long rule: {page} px wide in {viewport} px"
        );
        if width == 1280 {
            // Every section, who is signed in, the theme and sign-out fit in one row.
            let height = header_height(client).await?;
            assert!(height < 70.0, "the desktop header is {height} px tall");
        } else {
            // On a phone a list's row is a block of lines: its cells are not squeezed into
            // columns a few characters wide (ids once wrapped a character or two a line).
            client
                .goto(&format!("{}/credentials", server.url()))
                .await?;
            pages::wait_for_text(client, "bind:app.example.com").await?;
            let widths = client
                .execute(
                    "return [...document.querySelectorAll('main tbody tr:first-child td:not(.select)')] \
                     .map(td => td.getBoundingClientRect().width);",
                    vec![],
                )
                .await?;
            let widths: Vec<f64> = widths
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(serde_json::Value::as_f64)
                .collect();
            assert!(
                widths.len() >= 4 && widths.iter().all(|w| *w > 250.0),
                "cells of a row at 375 px: {widths:?}"
            );
            browser.screenshot("layout-375-credentials-rows").await?;
        }
    }
    // So they do for a user with a name (a long one is cut): it shows where the role did.
    let (_, me) = api.get("/me").await?;
    let account = me["account_id"].as_str().unwrap_or_default();
    let (_, named_key) = server.user(account, "Alexandra Lovelace-Babbage", false)?;
    let named = Browser::start().await?;
    sign_in(&named.client, &server.url(), &named_key).await?;
    pages::set_viewport(&named.client, 1280, 900).await?;
    named
        .client
        .goto(&format!("{}/credentials", server.url()))
        .await?;
    pages::wait_for_text(&named.client, "Alexandra").await?;
    let height = header_height(&named.client).await?;
    named.screenshot("layout-1280-named-user").await?;
    assert!(height < 70.0, "a named user's header is {height} px tall");
    // And with a scrollbar (1264 px of a 1280 px screen: it wrapped there once the page grew
    // long), and on the wider desktops, where the account and the role show again: the header
    // once wrapped to two rows from 1341 px to about 1550 px.
    for width in [1264, 1341, 1400, 1450, 1500, 1550, 1600, 1700, 1920] {
        pages::set_viewport(&named.client, width, 900).await?;
        let height = header_height(&named.client).await?;
        assert!(
            height < 70.0,
            "a named user's header is {height} px tall at {width} px"
        );
    }
    named.close().await?;

    // Names, not only ids: the subscription list shows the destination's URL, the edge list
    // the backend's description, the credential list the rules themselves.
    pages::set_viewport(client, 1280, 900).await?;
    client
        .goto(&format!("{}/event-subscriptions", server.url()))
        .await?;
    pages::wait_for_text(client, "hooks.example.com/segment").await?;
    client.goto(&format!("{}/tls-edges", server.url())).await?;
    pages::wait_for_text(client, "named backend").await?;
    client
        .goto(&format!("{}/credentials", server.url()))
        .await?;
    pages::wait_for_text(client, "bind:host.example.com:8443").await?;
    assert!(!pages::page_text(client).await?.contains("rule(s)"));
    Ok(())
}

#[tokio::test]
async fn the_phone_header_is_one_row_with_a_menu() -> anyhow::Result<()> {
    let server = Server::start(&[])?;
    let browser = Browser::start().await?;
    let client = &browser.client;
    pages::set_viewport(client, 375, 740).await?;
    sign_in(client, &server.url(), ADMIN_KEY).await?;
    pages::wait_for_text(client, "Authtokens that tunnel agents use").await?;
    let height = header_height(client).await?;
    assert!(height < 70.0, "the phone header is {height} px tall");
    assert!(
        !pages::has_button(client, "Sign out").await?,
        "behind the menu"
    );
    pages::click_button(client, "Menu").await?;
    pages::wait_for_text(client, "Sign out").await?;
    browser.screenshot("mobile-menu-open").await?;
    pages::click_button(client, "TLS edges").await?;
    pages::wait_for_text(client, "Pick an edge").await?;
    assert!(
        !pages::has_button(client, "Sign out").await?,
        "the menu closes on navigation"
    );
    let (page, viewport) = pages::page_widths(client).await?;
    assert!(page <= viewport, "{page} > {viewport}");
    // Escape closes the menu, the focus back on its button.
    pages::click_button(client, "Menu").await?;
    pages::wait_for_text(client, "Sign out").await?;
    pages::press(client, fantoccini::key::Key::Escape).await?;
    pages::eventually("the menu closed by Escape", || async {
        Ok((!pages::has_button(client, "Sign out").await?).then_some(()))
    })
    .await?;
    assert!(
        pages::focused(client)
            .await?
            .starts_with("button#menu-toggle")
    );
    Ok(())
}

#[tokio::test]
async fn the_credential_list_does_not_shift_when_its_rows_arrive() -> anyhow::Result<()> {
    let stack = Stack::start(&[])?;
    let api = &stack.api;
    for i in 0..100 {
        api.create(
            "/credentials",
            json!({"description": format!("shift {i:03}"), "acl": ["bind:*.example.com"]}),
        )
        .await?;
    }
    let browser = stack.signed_in_browser().await?;
    let client = &browser.client;
    pages::wait_for_text(client, "shift 099").await?;
    // A fresh document: the layout shifts from the first paint to 100 rows shown.
    client.refresh().await?;
    pages::wait_for_text(client, "shift 000").await?;
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let shift = client
        .execute_async(
            "const done = arguments[arguments.length - 1]; let total = 0;
             new PerformanceObserver((list) => {
               for (const e of list.getEntries()) { if (!e.hadRecentInput) total += e.value; }
             }).observe({type: 'layout-shift', buffered: true});
             setTimeout(() => done(total), 200);",
            vec![],
        )
        .await?;
    let shift = shift.as_f64().unwrap_or(f64::MAX);
    assert!(shift < 0.1, "cumulative layout shift {shift}");
    Ok(())
}

/// Whether the toasts cover the focused element, and a description of both boxes.
async fn toast_covers_focus(client: &Client) -> anyhow::Result<(bool, String)> {
    let value = client
        .execute(
            "const a = document.activeElement.getBoundingClientRect();
             const t = document.querySelector('.toasts').getBoundingClientRect();
             const covered = t.height > 0 && a.bottom > t.top && a.top < t.bottom
               && a.right > t.left && a.left < t.right;
             return [covered, `focus ${a.top}-${a.bottom}, toasts ${t.top}-${t.bottom}`];",
            vec![],
        )
        .await?;
    Ok((
        value[0].as_bool().unwrap_or(true),
        value[1].as_str().unwrap_or_default().to_owned(),
    ))
}

#[tokio::test]
async fn a_toast_never_covers_the_field_just_used() -> anyhow::Result<()> {
    let stack = Stack::start(&[])?;
    // Enough edges that the create form is below the window's fold, as on a real account.
    for i in 0..12 {
        stack
            .api
            .create(
                "/edges/tls",
                json!({"description": format!("edge {i}"), "hostports": [format!("e{i}.example.com:443")]}),
            )
            .await?;
    }
    let browser = stack.signed_in_browser().await?;
    let client = &browser.client;
    for (n, (width, height)) in [(375, 800), (1280, 800)].into_iter().enumerate() {
        pages::set_viewport(client, width, height).await?;
        client
            .goto(&format!("{}/tls-edges", stack.server.url()))
            .await?;
        pages::wait_for_text(client, "edge 11").await?;
        pages::fill(client, "Description", &format!("new {n}")).await?;
        pages::fill(client, "Host:ports", &format!("new{n}.example.com:443")).await?;
        // Enter in the field, as a user submits: the focus stays there, at the window's
        // bottom, where the toast appears.
        pages::press(client, fantoccini::key::Key::Enter).await?;
        pages::wait_for_text(client, &format!("new{n}.example.com:443")).await?;
        // The list reloads above the form after the toast shows: look once that has settled.
        tokio::time::sleep(std::time::Duration::from_millis(1200)).await;
        assert!(
            pages::focused(client)
                .await?
                .starts_with("input#field-hostports"),
            "{}",
            pages::focused(client).await?
        );
        let (covered, boxes) = toast_covers_focus(client).await?;
        browser
            .screenshot(&format!("toast-clear-of-focus-{width}"))
            .await?;
        assert!(
            !covered,
            "at {width} px the toast covers the focused field: {boxes}"
        );
        assert!(
            pages::page_text(client).await?.contains("created."),
            "the toast is still up"
        );
    }
    Ok(())
}

#[tokio::test]
async fn an_unreachable_server_is_said_plainly_with_retry() -> anyhow::Result<()> {
    let (mut stack, browser) = Stack::signed_in(&[]).await?;
    let client = &browser.client;
    pages::wait_for_text(client, "Authtokens that tunnel agents use").await?;
    stack.server.stop();
    pages::click_button(client, "SSH CAs").await?;
    pages::wait_for_text(client, "Cannot reach the server").await?;
    assert!(!pages::page_text(client).await?.contains("TypeError"));
    assert!(
        !pages::has_button(client, "Next →").await?,
        "no pager under an error"
    );
    browser.screenshot("offline-retry").await?;
    pages::click_button(client, "Retry").await?;
    pages::wait_for_text(client, "Cannot reach the server").await?;
    Ok(())
}
