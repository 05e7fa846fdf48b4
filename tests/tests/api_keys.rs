//! API keys through the console: an admin creates a key (shown once, working at once), edits and
//! deletes it (revoked at once); the top bar names who is signed in, after a reload too; a
//! member sees only their own keys, is not offered an owner, and deleting the key the console
//! is signed in with signs them out, saying why; a bulk delete sends the console's own key
//! last.

use tunnel_e2e::api::{Api, id};
use tunnel_e2e::harness::{Browser, Stack};
use tunnel_e2e::pages::{self, api_keys, bulk, credentials, lists, sign_in::sign_in};

#[tokio::test]
async fn an_admin_creates_edits_and_revokes_an_api_key() -> anyhow::Result<()> {
    let (stack, browser) = Stack::signed_in(&[]).await?;
    let (api, client) = (&stack.api, &browser.client);
    let (_, me) = api.get("/me").await?;
    let (shown, title) = api_keys::who_am_i(client).await?;
    assert_eq!(
        shown, "admin",
        "the account is left to the title on a 1280 px screen"
    );
    assert!(
        title.contains(me["principal_id"].as_str().unwrap()),
        "{title}"
    );
    assert!(title.contains("of account default"), "{title}");

    api_keys::open_list(client).await?;
    // The key this console uses is marked.
    pages::wait_for_text(client, "this console").await?;
    pages::click_button(client, "New API key").await?;
    pages::fill(client, "Description", "e2e deploy script").await?;
    pages::field(client, "Owner").await?;
    pages::click_button(client, "Create API key").await?;
    let key = api_keys::key_in_dialog(client).await?;
    browser.screenshot("api-key-dialog").await?;
    // It works from the next request on.
    let with_key = Api::new(&stack.server.api_url(), &key);
    let (status, mine) = with_key.get("/me").await?;
    assert_eq!(status, 200, "{mine}");
    let key_id = mine["api_key_id"].as_str().unwrap().to_owned();
    pages::click_button(client, "I have copied it").await?;
    pages::wait_for_text(client, "Shown only once").await?;
    assert!(!pages::page_text(client).await?.contains(&key));

    api_keys::open_list(client).await?;
    pages::wait_for_text(client, "e2e deploy script").await?;
    browser.screenshot("api-keys-list").await?;
    lists::open_row(client, &key_id).await?;
    pages::click_button(client, "Edit").await?;
    pages::fill(client, "Description", "e2e deploy script (CI)").await?;
    pages::click_button(client, "Save changes").await?;
    pages::wait_for_text(client, "API key saved.").await?;
    let (_, fetched) = api.get(&format!("/api_keys/{key_id}")).await?;
    assert_eq!(fetched["description"], "e2e deploy script (CI)");

    // A reload keeps the page and names who is signed in again.
    client.refresh().await?;
    pages::wait_for_text(client, "e2e deploy script (CI)").await?;
    assert_eq!(api_keys::who_am_i(client).await?.0, "admin");

    pages::click_button(client, "Delete").await?;
    pages::wait_for_text(client, "Delete this API key?").await?;
    pages::wait_for_text(client, "401").await?;
    pages::click_in_dialog(client, "Delete API key").await?;
    pages::wait_for_text(client, "requests made with it now fail").await?;
    let (status, _) = with_key.get("/me").await?;
    assert_eq!(status, 401, "the deleted key is refused at once");

    // Opened directly (a fresh load, who is signed in not yet known when the key arrives), the
    // page of the key in use still says so, and so does its list row.
    let own = me["api_key_id"].as_str().unwrap();
    client
        .goto(&format!("{}/api-keys/{own}", stack.server.url()))
        .await?;
    pages::wait_for_text(client, "This console is signed in with this key.").await?;
    client
        .goto(&format!("{}/api-keys", stack.server.url()))
        .await?;
    pages::wait_for_text(client, "this console").await?;
    browser.close().await?;
    Ok(())
}

#[tokio::test]
async fn a_member_reaches_only_their_own_keys_and_deleting_theirs_signs_out() -> anyhow::Result<()>
{
    let stack = Stack::start(&[])?;
    let (_, me) = stack.api.get("/me").await?;
    let admin_key_id = me["api_key_id"].as_str().unwrap().to_owned();
    let (member_id, member_key) = stack.server.member(me["account_id"].as_str().unwrap())?;
    let browser = Browser::start().await?;
    let client = &browser.client;
    sign_in(client, &stack.server.url(), &member_key).await?;
    let (shown, title) = api_keys::who_am_i(client).await?;
    assert_eq!(
        shown, "member",
        "the account is left to the title on a 1280 px screen"
    );
    assert!(title.contains(&member_id), "{title}");

    // Only their own key is listed: not the admin's.
    api_keys::open_list(client).await?;
    pages::wait_for_text(client, "this console").await?;
    let rows = lists::row_ids(client).await?;
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_ne!(rows[0], admin_key_id);
    browser.screenshot("api-keys-member").await?;
    // No owner to pick, here or for a credential.
    pages::click_button(client, "New API key").await?;
    pages::wait_for_text(client, "At most 255 bytes").await?;
    assert!(!pages::page_text(client).await?.contains("Owner"));
    credentials::open_list(client).await?;
    pages::click_button(client, "New credential").await?;
    pages::wait_for_text(client, "Who or what uses this credential").await?;
    assert!(!pages::page_text(client).await?.contains("Owner"));

    // Deleting the key the console uses warns first, then signs out with the reason.
    api_keys::open_list(client).await?;
    lists::open_row(client, &rows[0]).await?;
    pages::wait_for_text(client, "This console is signed in with this key.").await?;
    pages::click_button(client, "Delete").await?;
    pages::wait_for_text(client, "signs you out of this browser").await?;
    pages::click_in_dialog(client, "Delete API key").await?;
    pages::wait_for_text(
        client,
        "You deleted the API key this console was signed in with",
    )
    .await?;
    let member = Api::new(&stack.server.api_url(), &member_key);
    assert_eq!(member.get("/me").await?.0, 401);
    let (status, listed) = stack.api.get("/api_keys").await?;
    assert_eq!(status, 200);
    assert!(
        listed["keys"]
            .as_array()
            .unwrap()
            .iter()
            .all(|k| id(k) != rows[0])
    );
    browser.close().await?;
    Ok(())
}

#[tokio::test]
async fn a_bulk_delete_revokes_the_consoles_own_key_last() -> anyhow::Result<()> {
    let stack = Stack::start(&[])?;
    let api = &stack.api;
    // Another key, then the one the console signs in with: newer, so listed first.
    let other = id(&api
        .create("/api_keys", serde_json::json!({"description": "script"}))
        .await?);
    let console = api
        .create("/api_keys", serde_json::json!({"description": "console"}))
        .await?;
    let browser = Browser::start().await?;
    let client = &browser.client;
    sign_in(
        client,
        &stack.server.url(),
        console["token"].as_str().unwrap(),
    )
    .await?;
    api_keys::open_list(client).await?;
    pages::wait_for_text(client, "this console").await?;
    let listed = lists::row_ids(client).await?;
    assert_eq!(listed[..2], [id(&console), other.clone()], "{listed:?}");

    bulk::click_row_box(client, &listed[0], false).await?;
    bulk::click_row_box(client, &listed[1], false).await?;
    // The confirmation says that the console's own key is one of them (said only when it is).
    bulk::act(
        client,
        "Delete",
        "The API key this console is signed in with is one of them",
        "Delete 2 API keys",
    )
    .await?;
    // Sent in the list's order but for the console's own key, which goes last: revoking it
    // first would have refused the other delete.
    let results = bulk::results(client).await?;
    assert_eq!(
        results,
        [other.clone(), id(&console)]
            .into_iter()
            .map(|id| (id, "done".to_owned(), "deleted".to_owned()))
            .collect::<Vec<_>>()
    );
    // Closing the run signs out, saying why (not the 401 of the list's reload).
    pages::click_in_dialog(client, "Close").await?;
    pages::wait_for_text(
        client,
        "You deleted the API key this console was signed in with",
    )
    .await?;
    let (_, keys) = api.get("/api_keys").await?;
    let left: Vec<String> = keys["keys"].as_array().unwrap().iter().map(id).collect();
    assert!(
        !left.contains(&other) && !left.contains(&id(&console)),
        "{left:?}"
    );
    browser.close().await?;
    Ok(())
}
