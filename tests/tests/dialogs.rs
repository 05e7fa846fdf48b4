//! Dialogs are modal for the keyboard: Tab and Shift+Tab stay inside, the page behind is inert,
//! Escape closes (a secret's dialog only once the secret was copied, or at the second Escape),
//! and focus returns to the button that opened the dialog.

use fantoccini::key::Key;
use serde_json::json;
use tunnel_e2e::api::id;
use tunnel_e2e::harness::Stack;
use tunnel_e2e::pages::{self, credentials, lists};

#[tokio::test]
async fn dialogs_keep_focus_inside_and_give_it_back() -> anyhow::Result<()> {
    let stack = Stack::start(&[])?;
    let api = &stack.api;
    let created = api
        .create("/credentials", json!({"description": "dialog laptop"}))
        .await?;
    let id = id(&created);
    let browser = stack.signed_in_browser().await?;
    let client = &browser.client;
    credentials::open_list(client).await?;
    lists::open_row(client, &id).await?;
    pages::wait_for_text(client, "ACL tester").await?;

    // The confirmation: focus starts on Cancel (the safe choice) and never leaves the dialog.
    pages::click_button(client, "Delete").await?;
    pages::wait_focus_in_dialog(client, "the open dialog").await?;
    assert!(pages::focused(client).await?.contains("Cancel"));
    let (tab, shift_tab) = (Key::Tab.to_string(), Key::Shift + &Key::Tab.to_string());
    pages::press_within_dialog(client, &tab, "Tab", 5, "the dialog").await?;
    pages::press_within_dialog(client, &shift_tab, "Shift+Tab", 3, "the dialog").await?;
    // The page behind is inert: the browser itself reports it.
    let inert = client
        .execute(
            "return document.querySelector('dialog[open]').matches(':modal');",
            vec![],
        )
        .await?;
    assert_eq!(inert.as_bool(), Some(true));
    browser.screenshot("dialog-confirm-delete").await?;

    pages::press(client, Key::Escape).await?;
    pages::eventually("the dialog closed", || async {
        let open = client
            .execute("return !!document.querySelector('dialog');", vec![])
            .await?;
        Ok((open.as_bool() == Some(false)).then_some(()))
    })
    .await?;
    let after = pages::focused(client).await?;
    assert!(after.contains("Delete"), "focus after Escape: {after}");
    pages::eventually("focus back on Delete", || async {
        let open = client
            .execute("return !!document.querySelector('dialog');", vec![])
            .await?;
        let focused = pages::focused(client).await?;
        Ok((open.as_bool() == Some(false) && focused.contains("Delete")).then_some(()))
    })
    .await?;
    // Nothing was deleted.
    let (status, _) = api.get(&format!("/credentials/{id}")).await?;
    assert_eq!(status, 200);

    // The token dialog of a new credential: focus on its copy button (a second Enter copies
    // rather than closes), Tab stays inside.
    pages::click_button(client, "Credentials").await?;
    pages::click_button(client, "New credential").await?;
    pages::fill(client, "Description", "dialog token").await?;
    pages::click_button(client, "Create credential").await?;
    pages::wait_focus_in_dialog(client, "the token dialog").await?;
    assert!(pages::focused(client).await?.contains("Copy"));
    pages::press_within_dialog(client, &tab, "Tab", 4, "the token dialog").await?;
    // Escape before the token was copied only warns: a habit must not throw it away unseen.
    pages::press(client, Key::Escape).await?;
    pages::wait_for_text(client, "press Escape again").await?;
    browser.screenshot("dialog-token-escape-warned").await?;
    assert!(pages::has_button(client, "I have copied it").await?);
    pages::press(client, Key::Escape).await?;
    pages::wait_for_text(client, "dialog token").await?;
    pages::wait_for_focus(client, "h1").await?;

    // Once copied, one Escape closes: the clipboard holds the token shown.
    pages::click_button(client, "Credentials").await?;
    pages::click_button(client, "New credential").await?;
    pages::fill(client, "Description", "dialog copied").await?;
    pages::click_button(client, "Create credential").await?;
    pages::wait_focus_in_dialog(client, "the token dialog").await?;
    pages::click_in_dialog(client, "Copy").await?;
    pages::wait_for_text(client, "Copied to the clipboard.").await?;
    let shown = credentials::token_in_dialog(client).await?;
    pages::press(client, Key::Escape).await?;
    pages::wait_for_text(client, "dialog copied").await?;
    pages::wait_for_focus(client, "h1").await?;
    // What the button copied is the token shown: pasted into the page's ACL tester.
    pages::field(client, "Domain, host:port or key=value")
        .await?
        .click()
        .await?;
    pages::press(client, Key::Control + "v").await?;
    let pasted = pages::value_of(client, "Domain, host:port or key=value").await?;
    assert_eq!(pasted, shown);
    browser.close().await?;
    Ok(())
}
