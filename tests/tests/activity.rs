//! Flow 13: the audit log in the console. A credential created in the console shows on the
//! Activity page (type, the signed-in user as actor, the object linked by name); the filters
//! live in the URL (reload, back / forward, a typed URL, the time range); one event in full; the recent
//! activity of the credential's page. Then webhooks: a destination created in the console
//! (its signing secret shown once), subscribed to `credential_created.v0`, receives the event
//! at a receiver in the test, and its page shows the attempt, a test event, a rotated secret and
//! the 409 of a delete while a subscription uses it.

use fantoccini::key::Key;
use serde_json::json;
use tunnel_e2e::api::id;
use tunnel_e2e::harness::{ALLOW_PRIVATE_WEBHOOKS, Stack, WebhookReceiver};
use tunnel_e2e::pages::{self, activity, credentials, event_destinations, lists};

const CREATED: &str = "credential_created.v0";

#[tokio::test]
async fn activity_shows_who_changed_what_and_keeps_its_filters_in_the_url() -> anyhow::Result<()> {
    let (stack, browser) = Stack::signed_in(&[]).await?;
    let (api, client) = (&stack.api, &browser.client);

    // A long description without spaces: the row must wrap it, not widen the page.
    let long = format!("e2e-{}", "very-long-credential-name".repeat(8));
    api.create("/credentials", json!({"description": long}))
        .await?;

    credentials::open_list(client).await?;
    pages::click_button(client, "New credential").await?;
    pages::fill(client, "Description", "e2e activity laptop").await?;
    pages::click_button(client, "Create credential").await?;
    credentials::token_in_dialog(client).await?;
    pages::click_button(client, "I have copied it").await?;

    let (_, events) = api.get(&format!("/events?type={CREATED}")).await?;
    let event = events["events"][0].clone();
    assert_eq!(event["object"]["description"], "e2e activity laptop");
    let (event_id, credential_id) = (
        id(&event),
        event["object_id"].as_str().unwrap_or_default().to_owned(),
    );
    let actor = event["actor"]["id"].as_str().unwrap_or_default().to_owned();
    assert_eq!(
        event["actor"]["type"], "user",
        "the admin key is a user's: {event}"
    );

    activity::open(client).await?;
    let row = activity::row_text(client, &event_id).await?;
    assert!(row.contains(CREATED), "type in {row:?}");
    assert!(row.contains(&format!("user {actor}")), "actor in {row:?}");
    assert!(
        row.contains("e2e activity laptop"),
        "object by name in {row:?}"
    );
    assert!(
        row.contains("ago") || row.contains("just now"),
        "relative time in {row:?}"
    );
    let href = activity::object_href(client, &event_id).await?;
    assert_eq!(
        href.as_deref(),
        Some(format!("/credentials/{credential_id}").as_str())
    );
    pages::set_viewport(client, 1280, 900).await?;
    browser.screenshot("activity-1280").await?;

    // A type from the select applies at once; Enter in the object field applies it.
    pages::select(client, "Type", CREATED).await?;
    activity::wait_for_query(client, &format!("type={CREATED}")).await?;
    pages::fill(client, "Object ID", &credential_id).await?;
    pages::press(client, Key::Enter).await?;
    let both = format!("type={CREATED}&object_id={credential_id}");
    activity::wait_for_query(client, &both).await?;
    pages::eventually("only the filtered event", || async {
        Ok((lists::row_ids(client).await? == [event_id.clone()]).then_some(()))
    })
    .await?;

    // A reload shows the same filters and events.
    client.refresh().await?;
    activity::wait_for_filter(client, "Type", CREATED).await?;
    activity::wait_for_filter(client, "Object ID", &credential_id).await?;
    activity::row_text(client, &event_id).await?;
    assert_eq!(
        lists::row_ids(client).await?,
        std::slice::from_ref(&event_id)
    );

    // Back: the type only (the object field empties); forward: both again.
    client.back().await?;
    activity::wait_for_query(client, &format!("type={CREATED}")).await?;
    activity::wait_for_filter(client, "Object ID", "").await?;
    pages::eventually("both credentials' events", || async {
        Ok((lists::row_ids(client).await?.len() == 2).then_some(()))
    })
    .await?;
    client.forward().await?;
    activity::wait_for_query(client, &both).await?;
    activity::wait_for_filter(client, "Object ID", &credential_id).await?;

    // A typed (shared) URL with another type.
    client
        .goto(&format!(
            "{}/activity?type=credential_deleted.v0",
            stack.server.url()
        ))
        .await?;
    activity::wait_for_filter(client, "Type", "credential_deleted.v0").await?;
    pages::wait_for_text(client, "No events match.").await?;

    // The time range ("From" is `after`, "Until" is `before`, as the API names them): the
    // event is before a time to come and not before one long past. (`before` was once also the
    // pager's cursor, and an "Until" then failed as a malformed page id.)
    for (before, shown) in [
        ("2099-01-01T00:00:00Z", true),
        ("2001-01-01T00:00:00Z", false),
    ] {
        client
            .goto(&format!(
                "{}/activity?object_id={credential_id}&before={before}",
                stack.server.url()
            ))
            .await?;
        if shown {
            activity::row_text(client, &event_id).await?;
        } else {
            pages::wait_for_text(client, "No events match.").await?;
        }
        assert!(
            !pages::page_text(client).await?.contains("Could not load"),
            "until {before}"
        );
    }

    // An id filter that is no id is said at its field, and nothing is asked of the API.
    client
        .goto(&format!("{}/activity", stack.server.url()))
        .await?;
    activity::row_text(client, &event_id).await?;
    pages::fill(client, "Object ID", "not an id").await?;
    pages::press(client, Key::Enter).await?;
    pages::wait_for_text(client, "is not an id: ids start with a kind's prefix").await?;
    assert!(!client.current_url().await?.as_str().contains("object_id="));
    assert!(!pages::page_text(client).await?.contains("Could not load"));

    // So is a time range whose Until is not after its From.
    client
        .goto(&format!("{}/activity", stack.server.url()))
        .await?;
    activity::row_text(client, &event_id).await?;
    client
        .execute(
            "for (const [id, v] of [['filter-after', '2030-12-31T10:00'], ['filter-before', '2020-01-01T10:00']]) {
               const input = document.getElementById(id);
               input.value = v;
               input.dispatchEvent(new Event('input', {bubbles: true}));
             }",
            vec![],
        )
        .await?;
    pages::click_button(client, "Apply filters").await?;
    pages::wait_for_text(client, "Until must be later than From").await?;
    pages::wait_for_focus(client, "input#filter-before").await?;
    assert!(!client.current_url().await?.as_str().contains("after="));

    // The types walked with the arrow keys apply once the choice rests, as one history entry.
    client
        .goto(&format!("{}/activity", stack.server.url()))
        .await?;
    activity::row_text(client, &event_id).await?;
    let entries = "return history.length;";
    let before = client.execute(entries, vec![]).await?;
    client
        .execute("document.getElementById('filter-type').focus();", vec![])
        .await?;
    for _ in 0..4 {
        pages::press(client, Key::Down).await?;
    }
    let chosen = client
        .execute(
            "return document.getElementById('filter-type').value;",
            vec![],
        )
        .await?;
    let chosen = chosen.as_str().unwrap_or_default().to_owned();
    // Four steps down from "Any type": four `change`s, each of which used to apply.
    let fourth = client
        .execute(
            "return document.getElementById('filter-type').options[4].value;",
            vec![],
        )
        .await?;
    assert_eq!(fourth.as_str(), Some(chosen.as_str()));
    activity::wait_for_query(client, &format!("type={chosen}")).await?;
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let after = client.execute(entries, vec![]).await?;
    assert_eq!(
        after.as_u64(),
        before.as_u64().map(|n| n + 1),
        "one entry for the walk"
    );
    // Clear filters is a button (not a link to the page itself) and leaves the focus on the
    // filters.
    pages::click_button(client, "Clear filters").await?;
    pages::eventually("the filters cleared", || async {
        Ok((!client.current_url().await?.as_str().contains("type=")).then_some(()))
    })
    .await?;
    pages::wait_for_focus(client, "select#filter-type").await?;

    // One event in full, from its row.
    client
        .goto(&format!(
            "{}/activity?object_id={credential_id}",
            stack.server.url()
        ))
        .await?;
    lists::open_row(client, &event_id).await?;
    pages::wait_for_text(client, "Event JSON").await?;
    let text = pages::page_text(client).await?;
    assert!(
        text.contains(&format!("\"object_id\": \"{credential_id}\"")),
        "{text}"
    );
    browser.screenshot("activity-event").await?;

    // An event (or a user) that does not exist is "Not found" with the way back, no Retry.
    for (route, back) in [
        (
            "activity/ev_000000000000000000000000000",
            "Back to Activity",
        ),
        ("users/usr_000000000000000000000000000", "Back to Users"),
    ] {
        client
            .goto(&format!("{}/{route}", stack.server.url()))
            .await?;
        pages::wait_for_text(client, back).await?;
        assert!(
            pages::page_text(client).await?.contains("Not found"),
            "{route}"
        );
        assert!(!pages::has_button(client, "Retry").await?, "{route}");
    }

    // The credential's page lists its recent activity, linked to the filtered Activity page.
    client
        .goto(&format!(
            "{}/credentials/{credential_id}",
            stack.server.url()
        ))
        .await?;
    activity::recent_has(client, &event_id).await?;
    pages::click_button(client, "All activity").await?;
    activity::wait_for_query(client, &format!("object_id={credential_id}")).await?;
    activity::row_text(client, &event_id).await?;

    // A destination's page has its recent activity too, and its events name it by its URL.
    let url = format!(
        "https://hooks.example.com/{}",
        "long-path-segment/".repeat(6)
    );
    let destination = api
        .create(
            "/event_destinations",
            json!({"target": {"webhook": {"url": url}}, "format": "json"}),
        )
        .await?;
    let destination = id(&destination);
    let (_, events) = api.get(&format!("/events?object_id={destination}")).await?;
    let created = id(&events["events"][0]);
    client
        .goto(&format!(
            "{}/event-destinations/{destination}",
            stack.server.url()
        ))
        .await?;
    pages::wait_for_text(client, "Rotate secret").await?;
    activity::recent_has(client, &created).await?;
    pages::set_viewport(client, 1280, 900).await?;
    browser.screenshot("destination-page-1280").await?;
    client
        .execute(
            "document.querySelector('.deliveries').scrollIntoView();",
            vec![],
        )
        .await?;
    browser
        .screenshot("destination-page-1280-deliveries")
        .await?;
    pages::set_viewport(client, 375, 740).await?;
    let (document, viewport) = pages::page_widths(client).await?;
    assert!(
        document <= viewport,
        "the destination page scrolls sideways: {document} > {viewport}"
    );
    browser.screenshot("destination-page-375").await?;
    pages::set_viewport(client, 1280, 900).await?;

    // On a phone: no sideways scrolling, long names wrap.
    client
        .goto(&format!("{}/activity", stack.server.url()))
        .await?;
    activity::row_text(client, &event_id).await?;
    pages::set_viewport(client, 375, 740).await?;
    let (document, viewport) = pages::page_widths(client).await?;
    assert!(
        document <= viewport,
        "the page scrolls sideways: {document} > {viewport}"
    );
    browser.screenshot("activity-375").await?;
    client
        .execute(
            "document.querySelector('.activity-list').scrollIntoView();",
            vec![],
        )
        .await?;
    browser.screenshot("activity-375-rows").await?;
    // A desktop at 200 % zoom (640 px): the rows are blocks of lines too, not five columns
    // squeezed to a letter or two a line, and nothing scrolls sideways.
    pages::set_viewport(client, 640, 800).await?;
    let (document, viewport) = pages::page_widths(client).await?;
    assert!(
        document <= viewport,
        "the page scrolls sideways at 640 px: {document} > {viewport}"
    );
    let display = client
        .execute(
            "return getComputedStyle(document.querySelector('.activity-list tbody tr')).display;",
            vec![],
        )
        .await?;
    assert_eq!(
        display,
        serde_json::json!("grid"),
        "a row is a block of lines"
    );
    browser.screenshot("activity-640-rows").await?;
    browser.close().await?;
    Ok(())
}

/// A detail page whose recent activity could not be loaded says so in that section, with a
/// Retry that loads it once the server answers again and leaves the focus on the section's
/// heading (the button goes with the error).
#[tokio::test]
async fn the_recent_activity_retries_a_failed_load() -> anyhow::Result<()> {
    let (stack, browser) = Stack::signed_in(&[]).await?;
    let (api, client) = (&stack.api, &browser.client);
    let credential = id(&api
        .create("/credentials", json!({"description": "retried activity"}))
        .await?);
    let (_, events) = api.get(&format!("/events?object_id={credential}")).await?;
    let event_id = id(&events["events"][0]);
    client
        .goto(&format!("{}/credentials/{credential}", stack.server.url()))
        .await?;
    activity::recent_has(client, &event_id).await?;

    // Away to the Activity page and back, every load of the audit log failing meanwhile.
    pages::fail_requests(client, "/api/events").await?;
    pages::click_button(client, "All activity").await?;
    pages::wait_for_text(client, "Could not load").await?;
    client.back().await?;
    pages::wait_for_text(client, "Could not load the activity").await?;
    pages::wait_for_text(client, "retried activity").await?;

    pages::stop_failing_requests(client).await?;
    pages::click_button(client, "Retry").await?;
    activity::recent_has(client, &event_id).await?;
    pages::wait_for_focus(client, "h2#recent-activity-title").await?;
    assert!(!pages::has_button(client, "Retry").await?);
    browser.close().await?;
    Ok(())
}

/// Needs the server side of webhook delivery (rotate_secret, test, deliveries and
/// `--allow-private-webhooks`).
#[tokio::test]
async fn a_subscribed_destination_receives_the_event_and_its_page_shows_the_attempt()
-> anyhow::Result<()> {
    let receiver = WebhookReceiver::start().await?;
    let (stack, browser) = Stack::signed_in(&[ALLOW_PRIVATE_WEBHOOKS]).await?;
    let (api, client) = (&stack.api, &browser.client);

    let secret = event_destinations::create(client, &receiver.url(), "e2e receiver").await?;
    assert!(
        secret.starts_with("whsec_"),
        "signing secret format: {secret}"
    );
    browser.screenshot("destination-secret").await?;
    pages::click_button(client, "I have copied it").await?;
    pages::wait_for_text(client, "Send test event").await?;
    let (_, list) = api.get("/event_destinations").await?;
    let destination = id(&list["event_destinations"][0]);
    assert_eq!(
        list["event_destinations"][0]["signing_secret"],
        serde_json::Value::Null
    );

    api.create(
        "/event_subscriptions",
        json!({"sources": [{"type": CREATED}], "destination_ids": [destination]}),
    )
    .await?;
    api.create("/credentials", json!({"description": "delivered"}))
        .await?;
    let shown = event_destinations::wait_for_delivery(client, "HTTP 200").await?;
    assert!(shown.contains(CREATED), "{shown}");
    assert!(
        receiver.bodies().iter().any(|b| b.contains(CREATED)),
        "the receiver got the event"
    );

    pages::click_button(client, "Send test event").await?;
    pages::wait_for_focus(client, "button#send-test").await?;
    pages::eventually("the test's attempt", || async {
        let text = pages::page_text(client).await?;
        Ok(text
            .contains("ms")
            .then_some(())
            .filter(|_| text.contains("HTTP 200")))
    })
    .await?;
    pages::set_viewport(client, 1280, 900).await?;
    browser.screenshot("destination-detail-1280").await?;
    pages::set_viewport(client, 375, 740).await?;
    let (document, viewport) = pages::page_widths(client).await?;
    assert!(
        document <= viewport,
        "the page scrolls sideways: {document} > {viewport}"
    );
    browser.screenshot("destination-detail-375").await?;
    pages::set_viewport(client, 1280, 900).await?;

    pages::click_button(client, "Rotate secret").await?;
    pages::click_in_dialog(client, "Rotate secret").await?;
    let rotated = event_destinations::secret_in_dialog(client).await?;
    assert!(
        rotated.starts_with("whsec_") && rotated != secret,
        "a new secret"
    );
    pages::click_button(client, "I have copied it").await?;

    // Still used by the subscription: the server's 409, said plainly.
    pages::click_button(client, "Delete").await?;
    pages::click_in_dialog(client, "Delete destination").await?;
    pages::wait_for_text(client, "A subscription still sends to this destination").await?;
    browser.close().await?;
    Ok(())
}
