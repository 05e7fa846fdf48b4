//! Deliveries: one signed POST per event and subscribed destination whose body is the event as
//! the API shows it; retries after failures and timeouts, every attempt listed; nothing across
//! accounts; nothing for a rejected request; the test ping.

use crate::receiver::{Receiver, Reply};
use crate::{app, credential, deliveries, deliveries_until, hook, quick_app, subscribed};
use serde_json::json;
use std::time::Duration;
use tunnel_core::resources::event_destination::{DeliveryState, DestinationTest};

const WAIT: Duration = Duration::from_secs(10);

#[tokio::test]
async fn a_change_is_delivered_once_signed_with_the_event_as_its_body() {
    let app = quick_app().await;
    let (receiver, d) = subscribed(&app, &[]).await;
    let secret = d.signing_secret.clone().unwrap();
    let (credential_id, token) = credential(&app, &app.admin_key).await;

    let got = receiver.next(WAIT).await;
    assert!(got.verifies_with(&secret), "{:?}", got.headers);
    assert!(!got.verifies_with(&tunnel_server::webhooks::sign::new_secret()));
    assert_eq!(got.header("content-type"), "application/json");
    let event = got.json();
    assert_eq!(event["type"], "credential_created.v0");
    assert_eq!(event["object"]["id"], credential_id.as_str());
    assert_eq!(got.header("webhook-id"), event["id"].as_str().unwrap());
    // Exactly the event as the API answers it, and never the secret token.
    let shown = app
        .get(&format!("/events/{}", event["id"].as_str().unwrap()))
        .send(&app)
        .await;
    assert_eq!(shown.json, event);
    let text = String::from_utf8_lossy(&got.body);
    assert!(!text.contains(&token), "{text}");
    assert!(!text.contains(token.split('_').next_back().unwrap()));
    receiver.nothing_for(Duration::from_millis(300)).await;

    let list = deliveries_until(&app, &d.id, |l| {
        l.deliveries
            .first()
            .is_some_and(|d| d.state == DeliveryState::Succeeded)
    })
    .await;
    assert_eq!(list.deliveries.len(), 1);
    let delivery = &list.deliveries[0];
    assert!(delivery.id.starts_with("dlv_"));
    assert_eq!(delivery.event_id, event["id"].as_str().unwrap());
    assert_eq!(delivery.event_type, "credential_created.v0");
    assert_eq!(delivery.next_attempt_at, None);
    assert_eq!(delivery.attempts.len(), 1);
    assert_eq!(delivery.attempts[0].status_code, Some(200));
    assert_eq!(delivery.attempts[0].error, None);
}

#[tokio::test]
async fn each_destination_subscribed_gets_one_delivery_however_many_subscriptions_name_it() {
    let app = quick_app().await;
    let (first, d1) = subscribed(&app, &[]).await;
    let second = Receiver::start(&[]).await;
    let d2 = hook(
        &app,
        &app.admin_key,
        &second.url,
        &["credential_created.v0"],
    )
    .await;
    // Both destinations named a second time, and the first by a subscription to another type.
    for (types, destinations) in [
        (["credential_created.v0"], vec![&d1.id, &d2.id]),
        (["credential_updated.v0"], vec![&d1.id]),
    ] {
        let sources: Vec<_> = types.iter().map(|t| json!({"type": t})).collect();
        let resp = app
            .post(
                "/event_subscriptions",
                json!({"sources": sources, "destination_ids": destinations}),
            )
            .send(&app)
            .await;
        assert_eq!(resp.status, 201, "{}", resp.text);
    }
    let (credential_id, _) = credential(&app, &app.admin_key).await;
    for (receiver, d) in [(&first, &d1), (&second, &d2)] {
        let got = receiver.next(WAIT).await;
        assert!(got.verifies_with(d.signing_secret.as_deref().unwrap()));
        assert_eq!(got.json()["object"]["id"], credential_id.as_str());
    }
    first.nothing_for(Duration::from_millis(300)).await;
    second.nothing_for(Duration::from_millis(100)).await;
    for d in [&d1, &d2] {
        assert_eq!(deliveries(&app, &d.id).await.deliveries.len(), 1);
    }
}

#[tokio::test]
async fn a_deleted_subscription_is_not_told_of_its_own_deletion() {
    // Its event is written after the delete, as every event after its change: the deleted
    // subscription no longer names a destination then, the other one still does.
    let app = quick_app().await;
    let kinds = ["event_subscription_deleted.v0"];
    let (gone, kept) = (Receiver::start(&[]).await, Receiver::start(&[]).await);
    let d1 = hook(&app, &app.admin_key, &gone.url, &kinds).await;
    let d2 = hook(&app, &app.admin_key, &kept.url, &kinds).await;
    let listed: serde_json::Value = app.fetch("/event_subscriptions").await;
    let subscription = listed["event_subscriptions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["destinations"][0]["id"] == d1.id.as_str())
        .expect("the first destination's subscription")["id"]
        .as_str()
        .unwrap()
        .to_owned();
    app.deleted(&format!("/event_subscriptions/{subscription}"))
        .await;
    let got = kept.next(WAIT).await;
    assert!(got.verifies_with(d2.signing_secret.as_deref().unwrap()));
    assert_eq!(got.json()["type"], "event_subscription_deleted.v0");
    assert_eq!(got.json()["object"]["id"], subscription.as_str());
    gone.nothing_for(Duration::from_millis(500)).await;
    kept.nothing_for(Duration::from_millis(100)).await;
    assert!(deliveries(&app, &d1.id).await.deliveries.is_empty());
}

#[tokio::test]
async fn a_rejected_request_emits_no_event_and_no_delivery() {
    let app = quick_app().await;
    let (receiver, d) = subscribed(&app, &[]).await;
    let before: serde_json::Value = app.get("/events").send(&app).await.json;
    let refused = app
        .post("/credentials", json!({"acl": ["nope:x"]}))
        .send(&app)
        .await;
    assert_eq!(refused.status, 400, "{}", refused.text);
    receiver.nothing_for(Duration::from_millis(500)).await;
    assert!(deliveries(&app, &d.id).await.deliveries.is_empty());
    let after: serde_json::Value = app.get("/events").send(&app).await.json;
    assert_eq!(before["events"], after["events"]);
}

#[tokio::test]
async fn failures_are_retried_until_a_success_and_every_attempt_is_listed() {
    let app = quick_app().await;
    let (receiver, d) = subscribed(&app, &[Reply::status(500), Reply::status(503)]).await;
    let secret = d.signing_secret.unwrap();
    credential(&app, &app.admin_key).await;
    let first = receiver.next(WAIT).await;
    let second = receiver.next(WAIT).await;
    let third = receiver.next(WAIT).await;
    for got in [&first, &second, &third] {
        assert!(got.verifies_with(&secret));
        // Retries are the same message: receivers deduplicate on it.
        assert_eq!(got.header("webhook-id"), first.header("webhook-id"));
    }
    // About the 50 ms base, then about twice that (jitter ±20 %).
    assert!(second.at - first.at >= Duration::from_millis(35));
    assert!(third.at - second.at >= Duration::from_millis(75));
    receiver.nothing_for(Duration::from_millis(300)).await;

    let list = deliveries_until(&app, &d.id, |l| {
        l.deliveries
            .first()
            .is_some_and(|d| d.state == DeliveryState::Succeeded)
    })
    .await;
    let attempts = &list.deliveries[0].attempts;
    let codes: Vec<_> = attempts.iter().map(|a| a.status_code).collect();
    assert_eq!(codes, [Some(200), Some(503), Some(500)], "newest first");
    assert_eq!(
        attempts[2].error.as_deref(),
        Some("the receiver answered HTTP 500")
    );
    assert_eq!(attempts[0].error, None);
    assert!(
        attempts
            .iter()
            .all(|a| a.attempted_at.ends_with('Z') && a.attempted_at.len() == 24)
    );
}

#[tokio::test]
async fn a_timeout_is_a_failed_attempt_and_is_retried() {
    let app = app(Duration::from_millis(300), Duration::from_millis(50)).await;
    let (receiver, d) = subscribed(&app, &[Reply::after(Duration::from_secs(2))]).await;
    credential(&app, &app.admin_key).await;
    receiver.next(WAIT).await;
    receiver.next(WAIT).await;
    let list = deliveries_until(&app, &d.id, |l| {
        l.deliveries
            .first()
            .is_some_and(|d| d.state == DeliveryState::Succeeded)
    })
    .await;
    let attempts = &list.deliveries[0].attempts;
    assert_eq!(attempts.len(), 2);
    assert_eq!(attempts[1].status_code, None);
    let error = attempts[1].error.as_deref().unwrap();
    assert!(error.contains("timed out"), "{error}");
    assert!(attempts[1].latency_ms >= 250, "{:?}", attempts[1]);
}

#[tokio::test]
async fn nothing_crosses_accounts() {
    let app = quick_app().await;
    let receiver = Receiver::start(&[]).await;
    let other = hook(
        &app,
        &app.other_key,
        &receiver.url,
        &["credential_created.v0"],
    )
    .await;
    credential(&app, &app.admin_key).await;
    receiver.nothing_for(Duration::from_millis(500)).await;
    // The first account's admin does not see the second account's destination's deliveries.
    let path = format!("/event_destinations/{}/deliveries", other.id);
    app.get(&path).send(&app).await.error(404, "ERR_TUNNEL_120");

    let (theirs, _) = credential(&app, &app.other_key).await;
    let got = receiver.next(WAIT).await;
    assert!(got.verifies_with(other.signing_secret.as_deref().unwrap()));
    assert_eq!(got.json()["object"]["id"], theirs.as_str());
    receiver.nothing_for(Duration::from_millis(300)).await;
}

#[tokio::test]
async fn the_deliveries_list_pages_and_takes_only_list_parameters() {
    let app = quick_app().await;
    let (_receiver, d) = subscribed(&app, &[]).await;
    for _ in 0..3 {
        credential(&app, &app.admin_key).await;
    }
    let all = deliveries_until(&app, &d.id, |l| l.deliveries.len() == 3).await;
    let path = format!("/event_destinations/{}/deliveries", d.id);
    let first: serde_json::Value = app.fetch(&format!("{path}?limit=2")).await;
    assert_eq!(first["deliveries"].as_array().unwrap().len(), 2);
    assert_eq!(first["deliveries"][0]["id"], all.deliveries[0].id.as_str());
    let next = first["next_page_uri"].as_str().unwrap();
    let second: serde_json::Value = app.fetch(next).await;
    assert_eq!(second["deliveries"][0]["id"], all.deliveries[2].id.as_str());
    assert_eq!(second["next_page_uri"], serde_json::Value::Null);
    app.get(&format!("{path}?type=x"))
        .send(&app)
        .await
        .error(400, "ERR_TUNNEL_115");
    app.get(&format!("{path}?before_id=ev_1"))
        .send(&app)
        .await
        .error(400, "ERR_TUNNEL_116");
}

#[tokio::test]
async fn test_sends_one_signed_ping_that_is_not_stored() {
    let app = quick_app().await;
    let (receiver, d) = subscribed(&app, &[]).await;
    let resp = app
        .post(&format!("/event_destinations/{}/test", d.id), json!({}))
        .send(&app)
        .await;
    assert_eq!(resp.status, 200, "{}", resp.text);
    let test: DestinationTest = resp.body();
    assert_eq!(test.attempt.status_code, Some(200));
    assert_eq!(test.attempt.error, None);
    let got = receiver.next(WAIT).await;
    assert!(got.verifies_with(d.signing_secret.as_deref().unwrap()));
    let ping = got.json();
    assert_eq!(ping["type"], "ping.v0");
    assert_eq!(ping["id"], test.event_id.as_str());
    assert_eq!(ping["object"]["id"], d.id.as_str());
    assert_eq!(ping["object"]["signing_secret"], serde_json::Value::Null);
    app.get(&format!("/events/{}", test.event_id))
        .send(&app)
        .await
        .error(404, "ERR_TUNNEL_120");
    assert!(deliveries(&app, &d.id).await.deliveries.is_empty());
    // A failing receiver: the answer says so, nothing is retried.
    receiver.then(&[Reply::status(410)]);
    let test: DestinationTest = app
        .post(&format!("/event_destinations/{}/test", d.id), json!({}))
        .send(&app)
        .await
        .body();
    assert_eq!(test.attempt.status_code, Some(410));
    receiver.next(WAIT).await;
    receiver.nothing_for(Duration::from_millis(300)).await;
    app.post("/event_destinations/ed_missing/test", json!({}))
        .send(&app)
        .await
        .error(404, "ERR_TUNNEL_120");
}

/// With every sender busy, nothing more is claimed: a claim's lease runs from the claim, and a
/// delivery claimed to wait for a sender could see its lease end while it is still being sent,
/// to be claimed and sent again. One sender, two deliveries, the first slow: while it is sent,
/// the second is due now (not leased until the first's lease ends).
#[tokio::test]
async fn nothing_is_claimed_while_every_sender_is_busy() {
    let app = with_senders(1, Duration::from_secs(5)).await;
    let (receiver, _) = subscribed(&app, &[Reply::after(Duration::from_millis(1500))]).await;
    credential(&app, &app.admin_key).await;
    credential(&app, &app.admin_key).await;
    receiver.next(WAIT).await;
    // The first is being sent: the second waits unclaimed, due at once.
    let due = app
        .state
        .store
        .next_delivery_due(&Default::default())
        .await
        .unwrap()
        .unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis();
    let now = i64::try_from(now).unwrap();
    assert!(due <= now + 1_000, "due in {} ms", due - now);
    // Then it is sent, once.
    receiver.next(WAIT).await;
    receiver.nothing_for(Duration::from_millis(500)).await;
}

/// A slow receiver and its backlog hold at most their share of the senders, and a reserve
/// stays for the others. Four senders (a destination's share 1, an account's 2, a reserve of
/// 1): a receiver that answers only after 30 s gets three requests at once (its share and the
/// two spare senders beyond the reserve), no more; the same account's other destination and
/// another account's destination still get theirs. Before the shares, its backlog took all four
/// senders and everyone else's webhooks waited for its answers.
#[tokio::test]
async fn a_slow_receiver_holds_only_its_share_and_the_spare_senders() {
    let app = with_senders(4, Duration::from_secs(60)).await;
    let slow = slow_backlog(&app, 1, 6, 3).await;
    let (mine, theirs) = mine_and_theirs(&app).await;
    assert_eq!(mine.next(WAIT).await.json()["type"], "api_key_created.v0");
    assert_eq!(
        theirs.next(WAIT).await.json()["type"],
        "credential_created.v0"
    );
    slow.nothing_for(Duration::from_millis(300)).await;
}

/// An account holds at most half of the senders within its shares: with eight senders
/// (a destination's share 2, an account's 4, a reserve of 2), an account with three slow
/// destinations holds four senders by its shares and two spare ones, and the reserve goes to
/// another account while that account's own fourth destination waits for one of its sends to
/// end.
#[tokio::test]
async fn an_account_holds_at_most_half_of_the_senders_by_its_shares() {
    let app = with_senders(8, Duration::from_secs(60)).await;
    let _slow = slow_backlog(&app, 3, 4, 6).await;
    let (mine, theirs) = mine_and_theirs(&app).await;
    assert_eq!(
        theirs.next(WAIT).await.json()["type"],
        "credential_created.v0"
    );
    mine.nothing_for(Duration::from_secs(1)).await;
}

/// An app whose delivery worker has `concurrency` senders and a request timeout of `timeout`
/// (retries 50 ms apart).
async fn with_senders(concurrency: usize, timeout: Duration) -> crate::common::TestApp {
    let mut config = crate::common::test_config();
    config.webhooks.allow_private = true;
    config.webhooks.timeout = timeout;
    config.webhooks.retry_base = Duration::from_millis(50);
    config.webhooks.concurrency = concurrency;
    crate::started(config).await
}

/// A receiver answering only after 30 s, behind `destinations` destinations of the first
/// account, each told of `credentials` new credentials: once `arrivals` requests reached it,
/// nothing more comes (the senders it may hold are all held).
async fn slow_backlog(
    app: &crate::common::TestApp,
    destinations: usize,
    credentials: usize,
    arrivals: usize,
) -> Receiver {
    let slow = Receiver::start(&[Reply::after(Duration::from_secs(30)); 16]).await;
    for _ in 0..destinations {
        hook(app, &app.admin_key, &slow.url, &["credential_created.v0"]).await;
    }
    for _ in 0..credentials {
        credential(app, &app.admin_key).await;
    }
    for _ in 0..arrivals {
        slow.next(WAIT).await;
    }
    slow.nothing_for(Duration::from_millis(500)).await;
    slow
}

/// Two quick receivers: one behind another destination of the first account (told of API
/// keys), one behind a destination of the second account (told of credentials); then an API
/// key of the first account and a credential of the second, for them.
async fn mine_and_theirs(app: &crate::common::TestApp) -> (Receiver, Receiver) {
    let mine = Receiver::start(&[]).await;
    hook(app, &app.admin_key, &mine.url, &["api_key_created.v0"]).await;
    let theirs = Receiver::start(&[]).await;
    hook(app, &app.other_key, &theirs.url, &["credential_created.v0"]).await;
    app.create("/api_keys", json!({"description": "k"})).await;
    credential(app, &app.other_key).await;
    (mine, theirs)
}
