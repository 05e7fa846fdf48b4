//! Users by name through the console: an admin gives a new credential to a user picked by name
//! (searching the picker), the list and the detail show the owner's name linking to the user's
//! page, which leads back to what they own; the Users list searches by name; the top bar names a
//! named member.

use tunnel_e2e::api::id;
use tunnel_e2e::harness::{Browser, Stack};
use tunnel_e2e::pages::{self, api_keys, credentials, lists, sign_in::sign_in};

#[tokio::test]
async fn owners_are_picked_and_shown_by_name() -> anyhow::Result<()> {
    let stack = Stack::start(&[])?;
    let (_, me) = stack.api.get("/me").await?;
    let account = me["account_id"].as_str().unwrap();
    let (grace, grace_key) = stack.server.user(account, "Grace Hopper", false)?;
    let (bot, _) = stack.server.user(account, "Nightly builds", true)?;
    let browser = stack.signed_in_browser().await?;
    let client = &browser.client;

    // A new credential for Grace: the picker finds her by a part of her name.
    credentials::open_list(client).await?;
    pages::click_button(client, "New credential").await?;
    pages::fill(client, "Description", "e2e owned by grace").await?;
    pages::wait_for_text(client, "Nightly builds").await?;
    // The signed-in admin is the first choice, "Me", and not listed again by their id.
    let options = pages::field(client, "Owner").await?.text().await?;
    let my_id = me["principal_id"].as_str().unwrap();
    let my_name = me["principal_name"].as_str().unwrap();
    assert!(options.starts_with("Me"), "{options}");
    assert!(options.contains(my_name) || my_name.is_empty(), "{options}");
    assert!(!options.contains(my_id), "{options}");
    pages::fill(client, "Find users and bots by name or id", "hopp").await?;
    pages::eventually("the search to leave the bot out of the owners", || async {
        let options = pages::field(client, "Owner").await?.text().await?;
        Ok((!options.contains("Nightly builds")).then_some(()))
    })
    .await?;
    pages::select_containing(client, "Owner", "Grace Hopper").await?;
    // A search that leaves her out keeps her, by name, as the choice made.
    pages::fill(client, "Find users and bots by name or id", "nightly").await?;
    pages::eventually("the search to find the bot", || async {
        let options = pages::field(client, "Owner").await?.text().await?;
        Ok(options.contains("Nightly builds").then_some(options))
    })
    .await
    .map(|options| assert!(options.contains("Grace Hopper"), "{options}"))?;
    pages::fill(client, "Find users and bots by name or id", "hopp").await?;
    pages::eventually("the search to leave the bot out again", || async {
        let options = pages::field(client, "Owner").await?.text().await?;
        Ok((!options.contains("Nightly builds")).then_some(()))
    })
    .await?;
    browser.screenshot("owner-picker").await?;
    pages::click_button(client, "Create credential").await?;
    pages::click_button(client, "I have copied it").await?;
    pages::wait_for_text(client, "Shown only once").await?;
    let (_, listed) = stack.api.get("/credentials?q=owned%20by%20grace").await?;
    let credential = &listed["credentials"][0];
    assert_eq!(credential["owner_id"], grace.as_str(), "{listed}");
    let credential_id = id(credential).to_owned();
    // The detail names the owner.
    pages::wait_for_text(client, "Grace Hopper").await?;

    // The list too, and the name leads to her page, which leads back to what she owns.
    credentials::open_list(client).await?;
    pages::wait_for_text(client, "Grace Hopper").await?;
    browser.screenshot("credentials-owner-names").await?;
    client
        .find(fantoccini::Locator::LinkText("Grace Hopper"))
        .await?
        .click()
        .await?;
    pages::wait_for_text(client, "Credentials they own").await?;
    let text = pages::page_text(client).await?;
    assert!(text.contains(&grace) && text.contains("Member"), "{text}");
    browser.screenshot("user-detail").await?;
    client
        .find(fantoccini::Locator::LinkText("Credentials they own"))
        .await?
        .click()
        .await?;
    pages::wait_for_text(client, "e2e owned by grace").await?;
    assert_eq!(lists::row_ids(client).await?, [credential_id.as_str()]);
    // Back returns to her page.
    client.back().await?;
    pages::wait_for_text(client, "Credentials they own").await?;

    // The Users list: everyone, then a search by name (kept over a reload).
    pages::open_from_navigation(client, "Users", "The people and bots of this account").await?;
    pages::wait_for_text(client, "Nightly builds").await?;
    let all = lists::row_ids(client).await?;
    assert!(all.contains(&grace) && all.contains(&bot), "{all:?}");
    pages::fill(client, "Search users", "nightly").await?;
    pages::eventually("the search to leave only the bot", || async {
        Ok((lists::row_ids(client).await? == [bot.clone()]).then_some(()))
    })
    .await?;
    client.refresh().await?;
    pages::wait_for_text(client, "Nightly builds").await?;
    assert_eq!(lists::row_ids(client).await?, [bot.as_str()]);
    browser.screenshot("users-search").await?;
    browser.close().await?;

    // Grace, signed in, is named in the top bar.
    let browser = Browser::start().await?;
    sign_in(&browser.client, &stack.server.url(), &grace_key).await?;
    let (shown, title) = api_keys::who_am_i(&browser.client).await?;
    assert_eq!(
        shown, "Grace Hopper",
        "the role is left to the title at 1280 px"
    );
    let expected = format!("Signed in as Grace Hopper (user {grace}, member) of account default");
    assert!(title.starts_with(&expected), "{title}");
    browser.close().await?;
    Ok(())
}

/// The owner picker whose users could not be loaded says so with a Retry, which loads them once
/// the server answers again, the form keeping what was typed.
#[tokio::test]
async fn the_owner_picker_retries_a_failed_load() -> anyhow::Result<()> {
    let stack = Stack::start(&[])?;
    let browser = stack.signed_in_browser().await?;
    let client = &browser.client;
    credentials::open_list(client).await?;
    pages::fail_requests(client, "/api/users").await?;
    pages::click_button(client, "New credential").await?;
    pages::fill(client, "Description", "kept while retrying").await?;
    pages::wait_for_text(client, "Could not load users").await?;
    pages::stop_failing_requests(client).await?;
    pages::click_button(client, "Retry").await?;
    // The button went with the error: the focus is on the picker's search, not lost.
    pages::wait_for_focus(client, "input#owner-search").await?;
    let options = pages::field(client, "Owner").await?.text().await?;
    assert!(options.starts_with("Me"), "{options}");
    let kept = pages::field(client, "Description")
        .await?
        .prop("value")
        .await?;
    assert_eq!(kept.as_deref(), Some("kept while retrying"));
    browser.close().await?;
    Ok(())
}

/// An admin made a member while the console is open: the next admin-only request is refused
/// (403) with the server's words, and the console reads who it is again, so the owner picker,
/// which only admins get, goes away without a reload.
#[tokio::test]
async fn a_role_taken_away_shows_once_the_server_refuses() -> anyhow::Result<()> {
    let stack = Stack::start(&[])?;
    let (_, me) = stack.api.get("/me").await?;
    let account = me["account_id"].as_str().unwrap();
    let my_id = me["principal_id"].as_str().unwrap();
    let (grace, _) = stack.server.user(account, "Grace Hopper", false)?;
    let (other_admin, _) = stack.server.user(account, "Other admin", false)?;
    stack.server.role(&other_admin, true)?;
    let browser = stack.signed_in_browser().await?;
    let client = &browser.client;
    credentials::open_list(client).await?;
    pages::click_button(client, "New credential").await?;
    pages::wait_for_text(client, "Grace Hopper").await?;

    stack.server.role(my_id, false)?;
    // The server applies it once its cache of keys lets go of this one (at most 10 s).
    pages::eventually("the server to see a member", || async {
        let (_, me) = stack.api.get("/me").await?;
        Ok((me["is_admin"] == false).then_some(()))
    })
    .await?;
    pages::select_containing(client, "Owner", "Grace Hopper").await?;
    pages::click_button(client, "Create credential").await?;
    pages::wait_for_text(client, "ERR_TUNNEL_123").await?;
    pages::eventually("the owner picker gone", || async {
        Ok((!pages::page_text(client)
            .await?
            .contains("Find users and bots"))
        .then_some(()))
    })
    .await?;
    let (_, listed) = stack.api.get("/credentials").await?;
    assert!(
        listed["credentials"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["owner_id"] != grace.as_str()),
        "{listed}"
    );
    browser.close().await?;
    Ok(())
}
