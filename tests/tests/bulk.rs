//! Acting on many rows from the console: credentials selected with a click, a Shift+click range
//! and the keyboard (`x`), deleted in one confirmed run with each row's result; a row that
//! fails shows the API's error and can be retried; two live agents restarted and then stopped
//! from the sessions list in one run each.

use fantoccini::Client;
use fantoccini::key::Key;
use serde_json::json;
use std::time::Duration;
use tunnel_e2e::api::{Api, id};
use tunnel_e2e::harness::{Agent, Stack};
use tunnel_e2e::pages::{self, bulk, credentials, eventually, lists, tunnel_sessions};

async fn bar_says(client: &Client, text: &str) -> anyhow::Result<()> {
    eventually(&format!("the bar saying {text:?}"), || async {
        Ok((bulk::bar_text(client).await?.as_deref() == Some(text)).then_some(()))
    })
    .await
}

async fn credential_ids(api: &Api) -> anyhow::Result<Vec<String>> {
    api.ids("/credentials", "credentials").await
}

#[tokio::test]
async fn credentials_are_selected_and_deleted_together() -> anyhow::Result<()> {
    let stack = Stack::start(&[])?;
    let api = &stack.api;
    let mut made = Vec::new();
    for n in 0..5 {
        made.push(id(&api
            .create("/credentials", json!({"description": format!("bulk {n}")}))
            .await?));
    }
    // Newest first, as the list shows them.
    made.reverse();
    let browser = stack.signed_in_browser().await?;
    let client = &browser.client;
    credentials::open_list(client).await?;
    eventually("every row", || async {
        Ok((lists::row_ids(client).await? == made).then_some(()))
    })
    .await?;
    assert_eq!(
        bulk::bar_text(client).await?,
        None,
        "no bar without a selection"
    );

    // A click, then a Shift+click three rows further: the four rows between are selected.
    bulk::click_row_box(client, &made[0], false).await?;
    bar_says(client, "1 credential selected").await?;
    bulk::click_row_box(client, &made[3], true).await?;
    bar_says(client, "4 credentials selected").await?;
    assert_eq!(bulk::selected_ids(client).await?, made[..4]);
    let all = client
        .execute(
            "const b = document.querySelector('input.select-all'); return [b.checked, b.indeterminate];",
            vec![],
        )
        .await?;
    assert_eq!(
        all,
        json!([false, true]),
        "the heading's box shows a partial selection"
    );
    // Shift+click back up unselects the range from the last click.
    bulk::click_row_box(client, &made[2], true).await?;
    bar_says(client, "2 credentials selected").await?;
    assert_eq!(bulk::selected_ids(client).await?, made[..2]);
    browser.screenshot("bulk-selected").await?;

    // Delete them: one confirmation naming the count, then each row's result.
    bulk::act(
        client,
        "Delete",
        "Delete 2 credentials?",
        "Delete 2 credentials",
    )
    .await?;
    let results = bulk::results(client).await?;
    assert_eq!(
        results,
        made[..2]
            .iter()
            .map(|id| (id.clone(), "done".to_owned(), "deleted".to_owned()))
            .collect::<Vec<_>>()
    );
    pages::wait_for_text(client, "2 credentials deleted").await?;
    browser.screenshot("bulk-done").await?;
    pages::click_in_dialog(client, "Close").await?;
    eventually("the list without them", || async {
        Ok((lists::row_ids(client).await? == made[2..]).then_some(()))
    })
    .await?;
    // The bar's button that opened the dialog is gone with the selection: the focus is on the
    // list's "select all" box, not lost.
    pages::wait_for_focus(client, "input.select-all").await?;
    assert_eq!(
        bulk::bar_text(client).await?,
        None,
        "what succeeded left the selection"
    );
    let mut left = credential_ids(api).await?;
    left.sort();
    let mut expected = made[2..].to_vec();
    expected.sort();
    assert_eq!(left, expected, "the API agrees");

    // The keyboard: j focuses the first row, x selects it, x again unselects it.
    pages::blur(client).await?;
    pages::press(client, "j").await?;
    pages::press(client, "x").await?;
    bar_says(client, "1 credential selected").await?;
    assert_eq!(bulk::selected_ids(client).await?, made[2..3]);
    pages::press(client, "x").await?;
    eventually("no selection", || async {
        Ok(bulk::bar_text(client).await?.is_none().then_some(()))
    })
    .await?;

    // All of the page through the heading's box. One is deleted behind the console's back: it
    // is gone, as asked (a 404 is no failure: a retry could only fail again). Another's
    // requests fail: its row says why, and "Retry the failed ones" sends it again.
    client
        .find(fantoccini::Locator::Css("input.select-all"))
        .await?
        .click()
        .await?;
    bar_says(client, "3 credentials selected").await?;
    let (status, _) = api
        .call(
            hyper::Method::DELETE,
            &format!("/credentials/{}", made[3]),
            None,
        )
        .await?;
    assert_eq!(status, 204);
    pages::fail_requests(client, &format!("/api/credentials/{}", made[4])).await?;
    bulk::act(
        client,
        "Delete",
        "Delete 3 credentials?",
        "Delete 3 credentials",
    )
    .await?;
    let results = bulk::results(client).await?;
    let failed: Vec<_> = results.iter().filter(|r| r.1 == "failed").collect();
    assert_eq!(failed.len(), 1, "{results:?}");
    assert_eq!(failed[0].0, made[4]);
    assert!(
        failed[0].2.contains("Cannot reach the server"),
        "why is shown: {:?}",
        failed[0].2
    );
    pages::wait_for_text(client, "2 of 3 credentials deleted").await?;
    pages::click_in_dialog(client, "Retry the failed ones (1)").await?;
    // Its button goes while the retry runs: the focus is on the dialog's Stop / Close.
    pages::wait_for_focus(client, "button.primary.bulk-close").await?;
    let retried = bulk::results(client).await?;
    assert_eq!(
        retried.iter().filter(|r| r.1 == "failed").count(),
        1,
        "{retried:?}"
    );
    // The server reachable again, the retry deletes it.
    pages::stop_failing_requests(client).await?;
    pages::click_in_dialog(client, "Retry the failed ones (1)").await?;
    pages::wait_for_text(client, "3 credentials deleted").await?;
    // Escape with the focus on nothing (the browser cancels the dialog itself) closes it the
    // console's way too: the deleted rows leave the selection and the list, no dialog is left.
    pages::blur(client).await?;
    pages::press(client, Key::Escape).await?;
    pages::wait_for_text(client, "No credentials yet.").await?;
    let dialogs = client
        .execute("return document.querySelectorAll('dialog').length;", vec![])
        .await?;
    assert_eq!(dialogs, json!(0));
    assert!(credential_ids(api).await?.is_empty());
    browser.close().await?;
    Ok(())
}

#[tokio::test]
async fn sessions_are_restarted_and_stopped_together() -> anyhow::Result<()> {
    let stack = Stack::start(&[])?;
    let (server, api) = (&stack.server, &stack.api);
    let credential = api.create("/credentials", json!({})).await?;
    let token = credential["token"].as_str().unwrap_or_default();
    let mut agents = [
        Agent::start(server, token, &["--bind", "one.example.com"])?,
        Agent::start(server, token, &["--bind", "two.example.com"])?,
    ];
    let first = api
        .wait_sessions("two sessions", |ids| (ids.len() == 2).then_some(ids))
        .await?;
    let browser = stack.signed_in_browser().await?;
    let client = &browser.client;
    tunnel_sessions::open_list(client).await?;
    for id in &first {
        pages::wait_for_text(client, id).await?;
    }

    // Restart both: each agent comes back with a new session.
    client
        .find(fantoccini::Locator::Css("input.select-all"))
        .await?
        .click()
        .await?;
    bar_says(client, "2 tunnel sessions selected").await?;
    bulk::act(
        client,
        "Restart",
        "Restart 2 tunnel sessions?",
        "Restart 2 tunnel sessions",
    )
    .await?;
    let results = bulk::results(client).await?;
    assert!(
        results.iter().all(|r| r.1 == "done" && r.2 == "restarted"),
        "{results:?}"
    );
    pages::click_in_dialog(client, "Close").await?;
    let second = api
        .wait_sessions("two new sessions", |ids| {
            (ids.len() == 2 && ids.iter().all(|id| !first.contains(id))).then_some(ids)
        })
        .await?;

    // Stop both: the agents exit with 0 and the list empties.
    for id in &second {
        pages::wait_for_text(client, id).await?;
    }
    for id in &second {
        bulk::click_row_box(client, id, false).await?;
    }
    bar_says(client, "2 tunnel sessions selected").await?;
    bulk::act(
        client,
        "Stop",
        "Stop 2 tunnel sessions?",
        "Stop 2 tunnel sessions",
    )
    .await?;
    let results = bulk::results(client).await?;
    assert!(
        results.iter().all(|r| r.1 == "done" && r.2 == "stopped"),
        "{results:?}"
    );
    pages::click_in_dialog(client, "Close").await?;
    for agent in &mut agents {
        let status = agent.process.wait_exit(Duration::from_secs(15))?;
        assert!(status.success(), "a stopped agent exits 0: {status}");
    }
    pages::wait_for_text(client, "No tunnel sessions online.").await?;
    assert!(api.session_ids().await?.is_empty());
    browser.close().await?;
    Ok(())
}

/// Back in the middle of a slow run: the run the user confirmed goes on to its end rather than
/// stopping silently after the row in flight, and a toast on the page they went back to says
/// how it ended.
#[tokio::test]
async fn a_run_left_by_back_finishes_and_says_so() -> anyhow::Result<()> {
    let stack = Stack::start(&[])?;
    let api = &stack.api;
    for n in 0..3 {
        api.create("/credentials", json!({"description": format!("left {n}")}))
            .await?;
    }
    let browser = stack.signed_in_browser().await?;
    let client = &browser.client;
    // A page to go back to, then the list.
    pages::open_from_navigation(client, "Activity", "Activity").await?;
    credentials::open_list(client).await?;
    pages::wait_for_text(client, "left 2").await?;
    client
        .find(fantoccini::Locator::Css("input.select-all"))
        .await?
        .click()
        .await?;
    bar_says(client, "3 credentials selected").await?;
    pages::delay_requests(client, "DELETE", 700).await?;
    bulk::act(
        client,
        "Delete",
        "Delete 3 credentials?",
        "Delete 3 credentials",
    )
    .await?;
    client.back().await?;
    pages::wait_for_text(client, "3 credentials deleted.").await?;
    assert_eq!(client.current_url().await?.path(), "/activity");
    assert_eq!(credential_ids(api).await?, Vec::<String>::new());
    browser.close().await?;
    Ok(())
}
