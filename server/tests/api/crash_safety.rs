//! Nothing acknowledged is lost in a crash: 50 writers creating credentials against the real
//! `tunnel-server` binary, which is killed with SIGKILL in the middle of the load and started
//! again on the same database; every credential whose create was answered 201 is there, with
//! its description. On a SQLite file, and in the PostgreSQL pass on a database of this test's
//! own (the reason this real-process test lives in the contract suite, which that pass runs).

use crate::common::process::{serve_on, stop};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tunnel_testkit::postgres::test_database;

const KEY: &str = "tk_crash_safety_admin_key_0123456789";
const WRITERS: usize = 50;
/// The load's limits are off: 50 writers on one key from one address are what the test wants.
const UNLIMITED: [&str; 4] = ["--rate-limit-key", "off", "--rate-limit-ip", "off"];

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap()
}

/// Every credential of the account, id → description, following `next_page_uri`.
async fn all_credentials(addr: SocketAddr) -> BTreeMap<String, String> {
    let client = client();
    let mut all = BTreeMap::new();
    let mut next = Some(format!("http://{addr}/api/credentials?limit=100"));
    // Bounded: far more pages than the load can create.
    for _ in 0..1000 {
        let Some(url) = next.take() else {
            return all;
        };
        let page: Value = client
            .get(&url)
            .bearer_auth(KEY)
            .header("service-version", "2")
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        for c in page["credentials"].as_array().unwrap() {
            all.insert(
                c["id"].as_str().unwrap().to_owned(),
                c["description"].as_str().unwrap_or_default().to_owned(),
            );
        }
        // The page's uri names the server's own address, which is this one.
        next = page["next_page_uri"].as_str().map(str::to_owned);
    }
    panic!("more than 1000 pages of credentials")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_acknowledged_write_survives_a_killed_server() {
    let dir = tempfile::tempdir().unwrap();
    let sqlite = format!("sqlite://{}", dir.path().join("tunnel.db").display());
    let db = test_database().unwrap();
    let (child, addr) = serve_on(&db, &sqlite, "crash-safety-node", KEY, &UNLIMITED);

    // id → description of every create answered 201.
    let acknowledged = Arc::new(Mutex::new(BTreeMap::new()));
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let acknowledged = acknowledged.clone();
            tokio::spawn(async move {
                let client = client();
                // Bounded: the server is killed long before.
                for i in 0..10_000 {
                    let description = format!("writer {w} write {i}");
                    let sent = client
                        .post(format!("http://{addr}/api/credentials"))
                        .bearer_auth(KEY)
                        .header("service-version", "2")
                        .json(&json!({"description": description}))
                        .send()
                        .await;
                    // The connection refused or cut by the kill ends this writer; an answer
                    // other than 201 would be a bug of the server under load.
                    let Ok(response) = sent else { return };
                    let status = response.status().as_u16();
                    let Ok(body) = response.json::<Value>().await else {
                        return;
                    };
                    assert_eq!(status, 201, "{body}");
                    let id = body["id"].as_str().unwrap().to_owned();
                    acknowledged.lock().unwrap().insert(id, description);
                }
            })
        })
        .collect();

    // Killed mid-load, once a good number of writes were acknowledged (bounded wait).
    for _ in 0..300 {
        if acknowledged.lock().unwrap().len() >= 300 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    stop(child);
    for writer in writers {
        writer.await.unwrap();
    }
    let acknowledged = acknowledged.lock().unwrap().clone();
    assert!(
        acknowledged.len() >= WRITERS,
        "the load hardly ran: {} writes acknowledged",
        acknowledged.len()
    );

    let (child, addr) = serve_on(&db, &sqlite, "crash-safety-node", KEY, &UNLIMITED);
    let stored = all_credentials(addr).await;
    stop(child);
    println!(
        "{} writes acknowledged before the kill, {} credentials stored after the restart",
        acknowledged.len(),
        stored.len()
    );
    let lost: Vec<_> = acknowledged
        .iter()
        .filter(|(id, description)| stored.get(*id) != Some(description))
        .collect();
    assert!(
        lost.is_empty(),
        "{} of {} acknowledged writes are missing or changed after the restart: {:?}",
        lost.len(),
        acknowledged.len(),
        lost.iter().take(5).collect::<Vec<_>>()
    );
    // Writes in flight at the kill may or may not have been committed; nothing else is there.
    assert!(
        stored.len() < acknowledged.len() + WRITERS,
        "{} stored",
        stored.len()
    );
}
