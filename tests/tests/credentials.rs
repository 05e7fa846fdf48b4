//! Flow 2: credentials through the console: create with two ACL rules (a bad rule flagged before
//! sending), the token shown once, the list, edit, the ACL tester, delete with confirmation.

use tunnel_e2e::api::id;
use tunnel_e2e::harness::Stack;
use tunnel_e2e::pages::{self, credentials, lists};

#[tokio::test]
async fn create_edit_test_and_delete_a_credential() -> anyhow::Result<()> {
    let (stack, browser) = Stack::signed_in(&[]).await?;
    let (api, client) = (&stack.api, &browser.client);
    credentials::open_list(client).await?;

    pages::click_button(client, "New credential").await?;
    pages::fill(client, "Description", "e2e laptop").await?;
    credentials::set_rule(client, 1, "bind:*.example.com").await?;
    credentials::set_rule(client, 2, "bind:bad rule").await?;
    // Flagged as typed, with core's message, before anything is sent.
    pages::wait_for_text(client, "contains whitespace").await?;
    browser.screenshot("credential-bad-rule").await?;
    let listed = api.count("/credentials", "credentials").await?;
    assert_eq!(listed, Some(0), "nothing was sent");
    credentials::set_rule(client, 2, "bind:env=prod").await?;
    pages::click_button(client, "Create credential").await?;

    let token = credentials::token_in_dialog(client).await?;
    assert!(
        tunnel_core::ids::SecretToken::parse(&token).is_some(),
        "token format: {token}"
    );
    browser.screenshot("credential-token-dialog").await?;
    // The token's field takes the row's width; its Copy button stays on one line beside it.
    let copy = client
        .execute(
            "const b = document.querySelector('dialog .copy-row button'); \
             const t = document.querySelector('dialog .copy-row textarea'); \
             return [b.getBoundingClientRect().width, t.getBoundingClientRect().width];",
            vec![],
        )
        .await?;
    let (button, field) = (
        copy[0].as_f64().unwrap_or(0.0),
        copy[1].as_f64().unwrap_or(0.0),
    );
    assert!(
        button >= 40.0 && field > 4.0 * button,
        "Copy {button} px, field {field} px"
    );
    pages::click_button(client, "I have copied it").await?;
    pages::wait_for_text(client, "Shown only once").await?;
    assert!(
        !pages::page_text(client).await?.contains(&token),
        "the token is gone after closing"
    );
    // The detail took the create form's place in the history: Back leads to the list, not
    // to an emptied form, and Forward to the detail again.
    client.back().await?;
    pages::eventually("the list after Back", || async {
        Ok((client.current_url().await?.path() == "/credentials").then_some(()))
    })
    .await?;
    client.forward().await?;
    pages::wait_for_text(client, "Shown only once").await?;

    let (_, listed) = api.get("/credentials").await?;
    let created = &listed["credentials"][0];
    assert_eq!(created["description"], "e2e laptop");
    assert_eq!(
        created["acl"],
        serde_json::json!(["bind:*.example.com", "bind:env=prod"])
    );
    assert_eq!(created["token"], serde_json::Value::Null);
    let id = id(created);

    credentials::open_list(client).await?;
    pages::wait_for_text(client, "e2e laptop").await?;
    pages::wait_for_text(client, &id).await?;
    browser.screenshot("credentials-list").await?;
    assert_eq!(pages::current_sections(client).await?, ["Credentials=page"]);

    // Searched, so that the delete below can show it returns to the same rows.
    pages::fill(client, "Search credentials", "laptop").await?;
    pages::eventually("the search in the URL", || async {
        Ok((client.current_url().await?.query() == Some("q=laptop")).then_some(()))
    })
    .await?;
    lists::open_row(client, &id).await?;
    // The way back to the list is not "the current page" to a screen reader.
    pages::wait_for_text(client, "Shown only once").await?;
    let marked = client
        .execute(
            "return [...document.querySelectorAll('.crumbs a[aria-current], a.brand[aria-current]')].length;",
            vec![],
        )
        .await?;
    assert_eq!(marked, serde_json::json!(0));
    // The top bar's section is the current item, not the current page.
    assert_eq!(pages::current_sections(client).await?, ["Credentials=true"]);
    pages::click_button(client, "Edit").await?;
    pages::fill(client, "Description", "e2e laptop (renamed)").await?;
    // Enter in the field saves; the editor closes and the page reloads, and the focus goes
    // back to the Edit button (not to the top of the page).
    pages::press(client, fantoccini::key::Key::Enter).await?;
    pages::wait_for_text(client, "Credential saved.").await?;
    pages::wait_for_focus(client, "button#edit-toggle").await?;
    let (_, fetched) = api.get(&format!("/credentials/{id}")).await?;
    assert_eq!(fetched["description"], "e2e laptop (renamed)");
    assert_eq!(
        fetched["acl"], created["acl"],
        "the ACL is unchanged by a description edit"
    );

    pages::fill(client, "Domain, host:port or key=value", "api.example.com").await?;
    pages::wait_for_text(client, "permitted by the rule bind:*.example.com").await?;
    pages::fill(client, "Domain, host:port or key=value", "example.org").await?;
    pages::wait_for_text(client, "Denied: no rule permits example.org").await?;
    browser.screenshot("credential-detail").await?;

    pages::click_button(client, "Delete").await?;
    pages::wait_for_text(client, "Delete this credential?").await?;
    pages::click_in_dialog(client, "Delete credential").await?;
    // Back to the list as it was left: searched, now finding nothing.
    pages::wait_for_text(client, "Nothing matches “laptop”.").await?;
    let url = client.current_url().await?;
    assert_eq!(
        (url.path(), url.query()),
        ("/credentials", Some("q=laptop"))
    );
    let (status, _) = api.get(&format!("/credentials/{id}")).await?;
    assert_eq!(status, 404);
    browser.close().await?;
    Ok(())
}

/// A slow delete: the Delete button says so and takes no second click while it runs, and a
/// user who moved on to another page meanwhile stays there when it ends (the toast says it was
/// done), rather than being taken back to the list.
#[tokio::test]
async fn a_slow_delete_shows_it_runs_and_leaves_a_user_who_moved_on_where_they_are()
-> anyhow::Result<()> {
    let (stack, browser) = Stack::signed_in(&[]).await?;
    let (api, client) = (&stack.api, &browser.client);
    let id = id(&api
        .create(
            "/credentials",
            serde_json::json!({"description": "slow delete"}),
        )
        .await?)
    .to_owned();
    client
        .goto(&format!("{}/credentials/{id}", stack.server.url()))
        .await?;
    pages::wait_for_text(client, "slow delete").await?;
    pages::delay_requests(client, "DELETE", 2000).await?;
    pages::click_button(client, "Delete").await?;
    pages::click_in_dialog(client, "Delete credential").await?;
    let button = client
        .find(fantoccini::Locator::XPath(
            "//button[normalize-space()='Deleting…']",
        ))
        .await?;
    // Unavailable while it runs (`aria-disabled`, so that it keeps the focus): a click on it
    // asks nothing.
    assert_eq!(
        button.attr("aria-disabled").await?.as_deref(),
        Some("true"),
        "Delete is unavailable while it runs"
    );
    button.click().await?;
    let asked = client
        .execute(
            "return document.querySelectorAll('dialog[open]').length;",
            vec![],
        )
        .await?;
    assert_eq!(asked, serde_json::json!(0), "no second confirmation");
    pages::open_from_navigation(client, "Activity", "Activity").await?;
    pages::wait_for_text(client, &format!("Credential {id} deleted")).await?;
    assert_eq!(client.current_url().await?.path(), "/activity");
    let (status, _) = api.get(&format!("/credentials/{id}")).await?;
    assert_eq!(status, 404);
    browser.close().await?;
    Ok(())
}

/// A slow create left for another page before its answer came: the authtoken, which the API
/// never shows again, is shown over the page the user went to.
#[tokio::test]
async fn an_authtoken_whose_page_was_left_is_shown_where_the_user_is() -> anyhow::Result<()> {
    let (stack, browser) = Stack::signed_in(&[]).await?;
    let (api, client) = (&stack.api, &browser.client);
    credentials::open_list(client).await?;
    pages::click_button(client, "New credential").await?;
    pages::fill(client, "Description", "left behind").await?;
    pages::delay_requests(client, "POST", 2000).await?;
    pages::click_button(client, "Create credential").await?;
    pages::open_from_navigation(client, "Activity", "Activity").await?;
    let token = credentials::token_in_dialog(client).await?;
    assert_eq!(client.current_url().await?.path(), "/activity");
    let (_, listed) = api.get("/credentials?q=left%20behind").await?;
    assert_eq!(
        listed["credentials"].as_array().map(Vec::len),
        Some(1),
        "{listed}"
    );
    assert!(
        tunnel_core::ids::SecretToken::parse(&token).is_some(),
        "token format: {token}"
    );
    pages::click_button(client, "I have copied it").await?;
    assert!(!pages::page_text(client).await?.contains(&token));
    assert_eq!(client.current_url().await?.path(), "/activity");

    // Left and come back to before the answer: the create form shown is another one, which
    // knows nothing of that create; the authtoken is shown over it all the same.
    credentials::open_list(client).await?;
    pages::click_button(client, "New credential").await?;
    pages::fill(client, "Description", "came back").await?;
    pages::click_button(client, "Create credential").await?;
    pages::open_from_navigation(client, "Activity", "Activity").await?;
    client.back().await?;
    let token = credentials::token_in_dialog(client).await?;
    assert!(tunnel_core::ids::SecretToken::parse(&token).is_some());
    assert_eq!(client.current_url().await?.path(), "/credentials/new");
    browser.close().await?;
    Ok(())
}

/// A credential deleted elsewhere (another tab, another user) while its page is open: Delete
/// there ends on the list, not on "was not deleted: not found" over the stale page.
#[tokio::test]
async fn deleting_what_was_deleted_elsewhere_ends_on_the_list() -> anyhow::Result<()> {
    let (stack, browser) = Stack::signed_in(&[]).await?;
    let (api, client) = (&stack.api, &browser.client);
    let id = id(&api
        .create(
            "/credentials",
            serde_json::json!({"description": "deleted twice"}),
        )
        .await?)
    .to_owned();
    client
        .goto(&format!("{}/credentials/{id}", stack.server.url()))
        .await?;
    pages::wait_for_text(client, "deleted twice").await?;
    let (status, _) = api
        .call(hyper::Method::DELETE, &format!("/credentials/{id}"), None)
        .await?;
    assert_eq!(status, 204);
    pages::click_button(client, "Delete").await?;
    pages::click_in_dialog(client, "Delete credential").await?;
    pages::eventually("the list", || async {
        Ok((client.current_url().await?.path() == "/credentials").then_some(()))
    })
    .await?;
    assert!(!pages::page_text(client).await?.contains("was not deleted"));
    browser.close().await?;
    Ok(())
}

/// Back to the list while a slow delete runs: the list, loaded before the delete ended, fetches
/// again once it has, so the deleted row does not stay on show.
#[tokio::test]
async fn a_list_gone_back_to_during_a_slow_delete_drops_the_row() -> anyhow::Result<()> {
    let (stack, browser) = Stack::signed_in(&[]).await?;
    let (api, client) = (&stack.api, &browser.client);
    let id = id(&api
        .create(
            "/credentials",
            serde_json::json!({"description": "going away"}),
        )
        .await?)
    .to_owned();
    client
        .goto(&format!("{}/credentials", stack.server.url()))
        .await?;
    lists::open_row(client, &id).await?;
    pages::wait_for_text(client, "going away").await?;
    pages::delay_requests(client, "DELETE", 2000).await?;
    pages::click_button(client, "Delete").await?;
    pages::click_in_dialog(client, "Delete credential").await?;
    client.back().await?;
    pages::wait_for_text(client, &format!("Credential {id} deleted")).await?;
    pages::eventually("the row gone from the list", || async {
        Ok((!lists::row_ids(client).await?.contains(&id)).then_some(()))
    })
    .await?;
    assert_eq!(client.current_url().await?.path(), "/credentials");
    browser.close().await?;
    Ok(())
}

/// A credential's page whose load failed keeps a heading (the page's name), and its Retry
/// leaves the focus on the heading of the page it loads. The page had no heading then, and the
/// focus fell to the page's body.
#[tokio::test]
async fn a_failed_detail_page_has_its_heading_and_retry_focuses_the_loaded_one()
-> anyhow::Result<()> {
    let (_stack, browser, cred) = one_credential_listed("retry me").await?;
    let client = &browser.client;
    pages::fail_requests(client, &format!("/api/credentials/{cred}")).await?;
    lists::open_row(client, &cred).await?;
    pages::wait_for_text(client, "Could not load").await?;
    let heading = client
        .find(fantoccini::Locator::Css("main h1"))
        .await?
        .text()
        .await?;
    assert_eq!(heading, format!("Credential {cred}"));
    pages::stop_failing_requests(client).await?;
    pages::click_button(client, "Retry").await?;
    pages::wait_for_text(client, "retry me").await?;
    pages::wait_for_focus(client, "h1").await?;
    browser.close().await?;
    Ok(())
}

/// A save of a credential deleted meanwhile (another tab, another admin): the page says it is
/// gone, with the way back, rather than keep the editor open over a 404.
#[tokio::test]
async fn saving_a_credential_deleted_meanwhile_says_it_is_gone() -> anyhow::Result<()> {
    let (stack, browser, cred) = one_credential_listed("soon gone").await?;
    let client = &browser.client;
    lists::open_row(client, &cred).await?;
    pages::wait_for_text(client, "soon gone").await?;
    pages::click_button(client, "Edit").await?;
    pages::fill(client, "Description", "edited").await?;
    let (status, _) = stack
        .api
        .call(hyper::Method::DELETE, &format!("/credentials/{cred}"), None)
        .await?;
    assert_eq!(status, 204);
    pages::click_button(client, "Save changes").await?;
    pages::wait_for_text(client, "Not found").await?;
    assert!(!pages::has_button(client, "Save changes").await?);
    assert!(
        pages::page_text(client)
            .await?
            .contains("Back to Credentials")
    );
    browser.close().await?;
    Ok(())
}

/// A server with one credential described `description`, and a browser signed in on the
/// credentials list showing it: the stack, the browser and the credential's id.
async fn one_credential_listed(
    description: &str,
) -> anyhow::Result<(Stack, tunnel_e2e::harness::Browser, String)> {
    let stack = Stack::start(&[])?;
    let created = stack
        .api
        .create(
            "/credentials",
            serde_json::json!({"description": description}),
        )
        .await?;
    let cred = id(&created);
    let browser = stack.signed_in_browser().await?;
    credentials::open_list(&browser.client).await?;
    pages::wait_for_text(&browser.client, &cred).await?;
    Ok((stack, browser, cred))
}
