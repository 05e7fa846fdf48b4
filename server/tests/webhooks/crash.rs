//! At-least-once across a crash: the real `tunnel-server` binary on a file database (or, in the
//! PostgreSQL pass, a database of this test's on the shared cluster), killed (SIGKILL) while its
//! delivery's request hangs at the receiver; after a restart on the same database the delivery
//! is sent again, signed with the same stored secret, and succeeds. Both starts are the same
//! node (`--node-id`), so the restart frees the lease its previous run held at once; another
//! node would free it when the dead node's lease ends (tests/cluster.rs in tunnel-e2e).
//!
//! And across a clean stop (SIGINT) under another node id each start, as servers started
//! without `--node-id` are: a send in flight finishes and is recorded before the process
//! exits, and is never sent twice; one that times out meanwhile is retried after the restart
//! at once, its lease freed by the stopping node, not held until it ends.

use crate::common::process::{serve_on, stop};
use crate::receiver::{Receiver, Reply};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::process::Child;
use std::time::Duration;
use tunnel_testkit::postgres::{TestDatabase, test_database};

const KEY: &str = "tk_crash_test_admin_key_0123456789";

fn start(db: &TestDatabase, sqlite: &str) -> (Child, SocketAddr) {
    serve_on(
        db,
        sqlite,
        "crash-test-node",
        KEY,
        &["--allow-private-webhooks", "--webhook-timeout", "60s"],
    )
}

async fn call(addr: SocketAddr, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let mut request = client
        .request(method, format!("http://{addr}/api{path}"))
        .bearer_auth(KEY)
        .header("service-version", "2");
    if let Some(body) = body {
        request = request.json(&body);
    }
    let resp = request.send().await.unwrap();
    let status = resp.status();
    let text = resp.text().await.unwrap();
    assert!(status.is_success(), "{path}: {status} {text}");
    serde_json::from_str(&text).unwrap()
}

/// A destination sending to `url`, subscribed to new credentials: its id and signing secret.
async fn subscribe(addr: SocketAddr, url: &str) -> (String, String) {
    let post = reqwest::Method::POST;
    let destination = call(
        addr,
        post.clone(),
        "/event_destinations",
        Some(json!({"target": {"webhook": {"url": url}}})),
    )
    .await;
    let id = destination["id"].as_str().unwrap().to_owned();
    call(
        addr,
        post,
        "/event_subscriptions",
        Some(json!({"sources": [{"type": "credential_created.v0"}], "destination_ids": [id]})),
    )
    .await;
    let secret = destination["signing_secret"].as_str().unwrap().to_owned();
    (id, secret)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delivery_in_flight_when_the_server_is_killed_arrives_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let sqlite = format!("sqlite://{}", dir.path().join("tunnel.db").display());
    // One database for both starts of the server.
    let db = test_database().unwrap();
    // The first request hangs (the server is killed meanwhile); later ones succeed.
    let receiver = Receiver::start(&[Reply::after(Duration::from_secs(120))]).await;
    let (child, addr) = start(&db, &sqlite);
    let post = reqwest::Method::POST;
    let (id, secret) = subscribe(addr, &receiver.url).await;
    call(addr, post, "/credentials", Some(json!({}))).await;
    let first = receiver.next(Duration::from_secs(10)).await;
    assert!(first.verifies_with(&secret));
    stop(child); // SIGKILL, mid-request.

    let (child, addr) = start(&db, &sqlite);
    let again = receiver.next(Duration::from_secs(20)).await;
    assert!(again.verifies_with(&secret));
    assert_eq!(again.header("webhook-id"), first.header("webhook-id"));
    // The same event; only its `uri`s differ, the restarted server listening on another port
    // (the object's too: it links to where the server answers now).
    let without_uris = |mut event: Value| {
        event.as_object_mut().unwrap().remove("uri");
        let object = event["object"].as_object_mut().unwrap().remove("uri");
        (event, object.unwrap().as_str().unwrap().to_owned())
    };
    let ((again, again_uri), (first, _)) = (without_uris(again.json()), without_uris(first.json()));
    assert_eq!(again, first);
    assert!(
        again_uri.starts_with(&format!("http://{addr}/api/credentials/")),
        "{again_uri}"
    );
    let path = format!("/event_destinations/{id}/deliveries");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let list = call(addr, reqwest::Method::GET, &path, None).await;
        let delivery = &list["deliveries"][0];
        if delivery["state"] == "succeeded" {
            assert_eq!(list["deliveries"].as_array().unwrap().len(), 1);
            assert_eq!(delivery["attempts"][0]["status_code"], 200);
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "{list}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    stop(child);
}

/// Sends SIGINT to `child` and waits for it to exit, successfully.
fn interrupt(mut child: Child) {
    let sent = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    assert!(child.wait().unwrap().success());
}

/// The deliveries of destination `id`, once the first is no longer pending.
async fn settled(addr: SocketAddr, id: &str) -> Value {
    let path = format!("/event_destinations/{id}/deliveries");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let list = call(addr, reqwest::Method::GET, &path, None).await;
        if list["deliveries"][0]["state"] != "pending" {
            return list;
        }
        assert!(tokio::time::Instant::now() < deadline, "{list}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clean_stop_finishes_what_is_in_flight_and_frees_what_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let sqlite = format!("sqlite://{}", dir.path().join("tunnel.db").display());
    let db = test_database().unwrap();
    let start = |node: &str| {
        serve_on(
            &db,
            &sqlite,
            node,
            KEY,
            &[
                "--allow-private-webhooks",
                "--webhook-timeout",
                "2s",
                "--webhook-retry-base-ms",
                "200",
            ],
        )
    };
    // The first answer comes a second after the stop; the second never comes in time.
    let receiver = Receiver::start(&[
        Reply::after(Duration::from_millis(1500)),
        Reply::after(Duration::from_secs(120)),
    ])
    .await;
    let (child, addr) = start("clean-stop-a");
    let post = reqwest::Method::POST;
    let (id, _) = subscribe(addr, &receiver.url).await;

    // In flight at the stop: finished, recorded, and sent once.
    call(addr, post.clone(), "/credentials", Some(json!({}))).await;
    let first = receiver.next(Duration::from_secs(10)).await;
    interrupt(child);
    let (child, addr) = start("clean-stop-b");
    let list = settled(addr, &id).await;
    let delivery = &list["deliveries"][0];
    assert_eq!(delivery["state"], "succeeded", "{list}");
    assert_eq!(delivery["attempts"].as_array().unwrap().len(), 1, "{list}");
    receiver.nothing_for(Duration::from_secs(2)).await;

    // Timing out while the server stops: retried at once after the restart.
    call(addr, post, "/credentials", Some(json!({}))).await;
    let second = receiver.next(Duration::from_secs(10)).await;
    assert_ne!(second.header("webhook-id"), first.header("webhook-id"));
    interrupt(child);
    let (child, addr) = start("clean-stop-c");
    let again = receiver.next(Duration::from_secs(10)).await;
    assert_eq!(again.header("webhook-id"), second.header("webhook-id"));
    let list = settled(addr, &id).await;
    let delivery = &list["deliveries"][0];
    assert_eq!(delivery["state"], "succeeded", "{list}");
    assert_eq!(delivery["attempts"].as_array().unwrap().len(), 2, "{list}");
    receiver.nothing_for(Duration::from_secs(1)).await;
    stop(child);
}
