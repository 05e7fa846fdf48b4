//! The keyboard shortcuts, used as a keyboard user does: `j` / `k` move between the rows and
//! Enter opens one, `g` then a letter goes to a section, `/` focuses the search (where letters
//! are typed, not taken as shortcuts), `n` opens the create page, `x` and `b` select a row and
//! go to the selection's actions, `?` lists them all, and they
//! can be turned off there, which a reload keeps. A row keeps the focus when the sessions list
//! brings new rows.

use fantoccini::key::Key;
use serde_json::json;
use tunnel_e2e::api::id;
use tunnel_e2e::harness::{Agent, Stack};
use tunnel_e2e::pages::{self, eventually, lists};

async fn path(client: &fantoccini::Client) -> anyhow::Result<String> {
    let url = client.current_url().await?;
    Ok(match url.query() {
        Some(q) => format!("{}?{q}", url.path()),
        None => url.path().to_owned(),
    })
}

async fn wait_path(client: &fantoccini::Client, wanted: &str) -> anyhow::Result<()> {
    eventually(&format!("the page {wanted}"), || async {
        Ok((path(client).await? == wanted).then_some(()))
    })
    .await
}

#[tokio::test]
async fn the_console_is_driven_by_its_shortcuts() -> anyhow::Result<()> {
    let stack = Stack::start(&[])?;
    let mut made = Vec::new();
    for description in ["kb alpha", "kb beta", "kb gamma"] {
        made.push(id(&stack
            .api
            .create("/credentials", json!({"description": description}))
            .await?));
    }
    let browser = stack.signed_in_browser().await?;
    let client = &browser.client;
    pages::wait_for_text(client, "kb gamma").await?;
    pages::blur(client).await?;

    // Rows: newest first.
    pages::press(client, "j").await?;
    assert!(
        pages::focused(client).await?.contains("kb gamma"),
        "{}",
        pages::focused(client).await?
    );
    pages::press(client, "j").await?;
    assert!(pages::focused(client).await?.contains("kb beta"));
    pages::press(client, "k").await?;
    assert!(pages::focused(client).await?.contains("kb gamma"));
    browser.screenshot("keyboard-row-focus").await?;
    pages::press(client, Key::Enter).await?;
    wait_path(client, &format!("/credentials/{}", made[2])).await?;

    // Sections.
    pages::wait_for_text(client, "Recent activity").await?;
    pages::blur(client).await?;
    pages::press(client, "g").await?;
    pages::press(client, "k").await?;
    wait_path(client, "/api-keys").await?;
    pages::press(client, "g").await?;
    pages::press(client, "c").await?;
    wait_path(client, "/credentials").await?;

    // The selection's actions follow the whole table in the tab order: `x` selects the
    // focused row, `b` goes to the selection bar's first action.
    pages::wait_for_text(client, "kb alpha").await?;
    pages::blur(client).await?;
    pages::press(client, "j").await?;
    pages::press(client, "x").await?;
    pages::press(client, "b").await?;
    pages::wait_for_focus(client, "button.danger \"Delete\"").await?;
    // Clear selection takes the bar, and itself, away: the focus goes to "select all".
    pages::press(client, Key::Tab).await?;
    pages::wait_for_focus(client, "button.link \"Clear selection\"").await?;
    pages::press(client, Key::Enter).await?;
    pages::wait_for_focus(client, "input.select-all").await?;
    // On a row's checkbox (where a click or "select all" leaves the focus) the shortcuts work
    // too: a checkbox takes no letters. `j` goes on from that row.
    client
        .execute(
            "document.querySelector('main table tbody tr input.row-select').focus();",
            vec![],
        )
        .await?;
    pages::press(client, "j").await?;
    let second = client
        .execute(
            "return document.activeElement === \
             document.querySelectorAll('main table tbody tr td.name-cell a.name')[1];",
            vec![],
        )
        .await?;
    assert_eq!(
        second.as_bool(),
        Some(true),
        "{}",
        pages::focused(client).await?
    );

    // Search: `/` focuses it, and letters typed there are text, not shortcuts.
    lists::row_ids(client).await?;
    pages::wait_for_text(client, "kb alpha").await?;
    pages::press(client, "/").await?;
    assert!(
        pages::focused(client)
            .await?
            .starts_with("input#list-search")
    );
    pages::press(client, "gk beta").await?;
    pages::wait_for_text(client, "Nothing matches “gk beta”.").await?;
    assert_eq!(path(client).await?, "/credentials?q=gk%20beta");

    // New.
    pages::blur(client).await?;
    pages::press(client, "n").await?;
    wait_path(client, "/credentials/new").await?;

    // "+ Add rule" by keyboard: the focus goes into the new rule, so typing fills it; removing
    // the rule gives the focus back to the button (not to the top of the page).
    client
        .execute("document.getElementById('acl-add-rule').focus();", vec![])
        .await?;
    pages::press(client, Key::Enter).await?;
    pages::wait_for_focus(client, "input#acl-rule-0").await?;
    pages::press(client, "bind:kb.example.com").await?;
    assert_eq!(
        pages::value_of(client, "Rule 1").await?,
        "bind:kb.example.com"
    );
    client
        .execute(
            "document.querySelector('.acl-row .remove').focus();",
            vec![],
        )
        .await?;
    pages::press(client, Key::Enter).await?;
    pages::wait_for_focus(client, "button#acl-add-rule").await?;

    // The list of shortcuts, where they are turned off; a reload keeps that.
    pages::blur(client).await?;
    pages::press(client, "?").await?;
    pages::wait_for_text(client, "Keyboard shortcuts").await?;
    pages::wait_focus_in_dialog(client, "the shortcuts dialog").await?;
    browser.screenshot("keyboard-shortcuts").await?;
    pages::field(client, "Single-key shortcuts on")
        .await?
        .click()
        .await?;
    pages::press(client, Key::Escape).await?;
    client.refresh().await?;
    pages::wait_for_text(client, "New credential").await?;
    pages::blur(client).await?;
    pages::press(client, "g").await?;
    pages::press(client, "k").await?;
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert_eq!(path(client).await?, "/credentials/new", "shortcuts are off");
    // The top bar's button still opens the list, where they go back on.
    pages::click_button(client, "?").await?;
    pages::field(client, "Single-key shortcuts on")
        .await?
        .click()
        .await?;
    pages::click_in_dialog(client, "Close").await?;
    pages::blur(client).await?;
    pages::press(client, "g").await?;
    pages::press(client, "k").await?;
    wait_path(client, "/api-keys").await?;
    browser.close().await?;
    Ok(())
}

/// The data-id of the row whose name link holds the focus (empty when the focus is elsewhere).
async fn focused_row(client: &fantoccini::Client) -> anyhow::Result<String> {
    let value = client
        .execute(
            "const e = document.activeElement;
             const row = e && e.matches('a.name') && e.closest('tr[data-id]');
             return row ? row.dataset.id : '';",
            vec![],
        )
        .await?;
    Ok(value.as_str().unwrap_or_default().to_owned())
}

#[tokio::test]
async fn the_focused_row_keeps_the_focus_when_the_sessions_list_changes() -> anyhow::Result<()> {
    let stack = Stack::start(&[])?;
    let (server, api) = (&stack.server, &stack.api);
    let credential = api
        .create("/credentials", json!({"description": "focus laptop"}))
        .await?;
    let token = credential["token"].as_str().unwrap_or_default().to_owned();
    let _first = Agent::start(server, &token, &["--bind", "one.example.com"])?;
    let first = api
        .wait_sessions("the first session", |ids| ids.into_iter().next())
        .await?;
    let browser = stack.signed_in_browser().await?;
    let client = &browser.client;
    client.goto(&format!("{}/sessions", server.url())).await?;
    pages::wait_for_text(client, &first).await?;
    pages::blur(client).await?;
    pages::press(client, "j").await?;
    assert_eq!(focused_row(client).await?, first);

    // A second agent: the list's next refresh brings new rows.
    let _second = Agent::start(server, &token, &["--bind", "two.example.com"])?;
    let second = api
        .wait_sessions("the second session", |ids| {
            ids.into_iter().find(|id| *id != first)
        })
        .await?;
    pages::wait_for_text(client, &second).await?;
    assert_eq!(
        focused_row(client).await?,
        first,
        "the focus after the refresh"
    );
    // And it goes on from there: the newer session is listed first.
    pages::press(client, "k").await?;
    assert_eq!(focused_row(client).await?, second);
    Ok(())
}
