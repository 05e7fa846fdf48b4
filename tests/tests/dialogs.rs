//! Dialogs are modal for the keyboard: Tab and Shift+Tab stay inside, the page behind is inert,
//! Escape closes, and focus returns to the button that opened the dialog.

use fantoccini::key::Key;
use serde_json::json;
use tunnel_e2e::api::Api;
use tunnel_e2e::harness::{ADMIN_KEY, Browser, Server};
use tunnel_e2e::pages::{self, credentials, lists, sign_in::sign_in};

#[tokio::test]
async fn dialogs_keep_focus_inside_and_give_it_back() -> anyhow::Result<()> {
    let server = Server::start(&[])?;
    let api = Api::new(&server.api_url(), ADMIN_KEY);
    let created = api
        .create("/credentials", json!({"description": "dialog laptop"}))
        .await?;
    let id = created["id"].as_str().unwrap_or_default().to_owned();
    let browser = Browser::start().await?;
    let client = &browser.client;
    sign_in(client, &server.url(), ADMIN_KEY).await?;
    credentials::open_list(client).await?;
    lists::open_row(client, &id).await?;
    pages::wait_for_text(client, "ACL tester").await?;

    // The confirmation: focus starts on Cancel (the safe choice) and never leaves the dialog.
    pages::click_button(client, "Delete").await?;
    pages::eventually("the open dialog", || async {
        Ok(pages::focus_in_dialog(client).await?.then_some(()))
    })
    .await?;
    assert!(pages::focused(client).await?.contains("Cancel"));
    for _ in 0..5 {
        pages::press(client, Key::Tab).await?;
        assert!(
            pages::focus_in_dialog(client).await?,
            "Tab left the dialog for {}",
            pages::focused(client).await?
        );
    }
    for _ in 0..3 {
        pages::press(client, Key::Shift + &Key::Tab.to_string()).await?;
        assert!(
            pages::focus_in_dialog(client).await?,
            "Shift+Tab left the dialog"
        );
    }
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
    let (status, _) = api
        .call(hyper::Method::GET, &format!("/credentials/{id}"), None)
        .await?;
    assert_eq!(status, 200);

    // The token dialog of a new credential: focus on its close button, Tab stays inside.
    pages::click_button(client, "Credentials").await?;
    pages::click_button(client, "New credential").await?;
    pages::fill(client, "Description", "dialog token").await?;
    pages::click_button(client, "Create credential").await?;
    pages::eventually("the token dialog", || async {
        Ok(pages::focus_in_dialog(client).await?.then_some(()))
    })
    .await?;
    assert!(pages::focused(client).await?.contains("I have copied it"));
    for _ in 0..4 {
        pages::press(client, Key::Tab).await?;
        assert!(
            pages::focus_in_dialog(client).await?,
            "Tab left the token dialog"
        );
    }
    pages::press(client, Key::Escape).await?;
    pages::wait_for_text(client, "dialog token").await?;
    pages::eventually("the detail page's heading focused", || async {
        Ok(pages::focused(client)
            .await?
            .starts_with("h1")
            .then_some(()))
    })
    .await?;
    browser.client.clone().close().await?;
    Ok(())
}
