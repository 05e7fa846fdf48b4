//! Writes under concurrency, the store's contract on every database it runs on (a SQLite file —
//! not the in-memory database, whose one connection would serialise everything anyway — and
//! PostgreSQL in `cargo xtask test`'s second pass): many requests at once never lose a write,
//! never duplicate one, never answer 500, and every write has its event.

use crate::common::TestApp;
use serde_json::json;
use std::collections::BTreeSet;
use tunnel_core::resources::backend::TunnelGroupBackend;
use tunnel_core::resources::credential::{Credential, CredentialList};
use tunnel_core::resources::event::EventList;
use tunnel_server::store::DatabaseUrl;

/// The app on the run's database, a SQLite file (in `dir`) when the run is on SQLite: several
/// pooled connections, as in production.
async fn app(dir: &tempfile::TempDir) -> TestApp {
    let mut config = crate::common::test_config();
    if config.database == DatabaseUrl::SqliteMemory {
        config.database = DatabaseUrl::SqliteFile(dir.path().join("tunnel.db"));
    }
    TestApp::with_config(config).await
}

/// Runs every task at once (each on the runtime's worker threads) and waits for all of them.
async fn join_all<T: Send + 'static>(
    tasks: impl IntoIterator<Item = impl Future<Output = T> + Send + 'static>,
) -> Vec<T> {
    let handles: Vec<_> = tasks.into_iter().map(tokio::spawn).collect();
    let mut done = Vec::with_capacity(handles.len());
    for handle in handles {
        done.push(handle.await.expect("a task panicked"));
    }
    done
}

/// Every credential of the account, following the pages.
async fn all_credentials(app: &TestApp) -> Vec<Credential> {
    let mut all = Vec::new();
    let mut path = "/credentials?limit=100".to_owned();
    loop {
        let page: CredentialList = app.fetch(&path).await;
        all.extend(page.credentials);
        match page.next_page_uri {
            Some(next) => path = next.trim_start_matches(crate::common::BASE).to_owned(),
            None => return all,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_creates_are_all_kept_once_each_with_its_event() {
    let dir = tempfile::tempdir().unwrap();
    let app = app(&dir).await;
    let answers = join_all((0..60).map(|i| {
        let app = app.clone();
        async move {
            app.post("/credentials", json!({"description": format!("c{i}")}))
                .send(&app)
                .await
        }
    }))
    .await;
    for answer in &answers {
        assert_eq!(answer.status, 201, "{}", answer.text);
    }
    let listed = all_credentials(&app).await;
    let descriptions: BTreeSet<String> = listed.iter().map(|c| c.description.clone()).collect();
    assert_eq!(listed.len(), 60);
    assert_eq!(descriptions.len(), 60, "a create was lost or doubled");
    let ids: BTreeSet<&str> = listed.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids.len(), 60);
    let events: EventList = app
        .fetch("/events?type=credential_created.v0&limit=100")
        .await;
    assert_eq!(events.events.len(), 60, "one event per create");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_updates_of_one_row_each_apply_and_record_once() {
    let dir = tempfile::tempdir().unwrap();
    let app = app(&dir).await;
    let created: Credential = app.created("/credentials", json!({})).await;
    let path = format!("/credentials/{}", created.id);
    let answers = join_all((0..30).map(|i| {
        let (app, path) = (app.clone(), path.clone());
        async move {
            app.patch(&path, json!({"metadata": format!("m{i}")}))
                .send(&app)
                .await
        }
    }))
    .await;
    for answer in &answers {
        assert_eq!(answer.status, 200, "{}", answer.text);
    }
    let last: Credential = app.fetch(&path).await;
    assert!(last.metadata.starts_with('m'), "{}", last.metadata);
    let events: EventList = app
        .fetch(&format!(
            "/events?type=credential_updated.v0&object_id={}&limit=100",
            created.id
        ))
        .await;
    // Every PATCH changed the metadata from what the one before it left (each value differs),
    // so each recorded exactly one update, and the newest event shows the final row.
    assert_eq!(events.events.len(), 30);
    assert_eq!(events.events[0].object["metadata"], json!(last.metadata));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn deleting_a_backend_while_edges_are_pointed_at_it_is_never_a_500() {
    let dir = tempfile::tempdir().unwrap();
    let app = app(&dir).await;
    let backend: TunnelGroupBackend = app
        .created("/backends/tunnel_group", json!({"labels": {"app": "a"}}))
        .await;
    let edges = join_all((0..20).map(|_| {
        let app = app.clone();
        async move {
            app.post("/edges/tls", json!({"hostports": []}))
                .send(&app)
                .await
        }
    }))
    .await;
    let edge_ids: Vec<String> = edges
        .iter()
        .map(|e| e.json["id"].as_str().unwrap().to_owned())
        .collect();
    let backend_path = format!("/backends/tunnel_group/{}", backend.id);
    let mut work: Vec<_> = edge_ids
        .iter()
        .map(|id| {
            let app = app.clone();
            let path = format!("/edges/tls/{id}/backend");
            let body = json!({"backend_id": backend.id});
            Box::pin(async move { app.put(&path, body).send(&app).await })
                as std::pin::Pin<Box<dyn Future<Output = _> + Send>>
        })
        .collect();
    let deleter = {
        let (app, path) = (app.clone(), backend_path.clone());
        Box::pin(async move { app.delete(&path).send(&app).await })
    };
    work.push(deleter);
    let answers = join_all(work).await;
    for answer in &answers {
        assert!(
            [200, 204, 400, 409].contains(&answer.status),
            "{} {}",
            answer.status,
            answer.text
        );
    }
    // Either the backend is gone and no edge points at it, or it stayed (409: in use) and
    // some edges do; never an edge pointing at a backend that does not exist.
    let backend_alive = app.get(&backend_path).send(&app).await.status == 200;
    for id in &edge_ids {
        let edge = app.get(&format!("/edges/tls/{id}")).send(&app).await;
        let pointed = edge.json["backend"]["backend"]["id"].as_str() == Some(&backend.id);
        assert!(
            !pointed || backend_alive,
            "edge {id} points at a deleted backend"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn refused_writes_leave_the_rest_of_their_group_committed() {
    // Writes queued together commit in one transaction (docs/database.md: pooled ones each in
    // a savepoint, a SQLite file's direct ones refused before they change anything): one
    // refused inside its transaction (a missing reference, a delete of a row in use) must undo
    // only itself, never a neighbour's write, and never fail a neighbour.
    let dir = tempfile::tempdir().unwrap();
    let app = app(&dir).await;
    let destination: serde_json::Value = app
        .created(
            "/event_destinations",
            json!({"target": {"webhook": {"url": "https://hooks.example.com/in"}}}),
        )
        .await;
    let destination_id = destination["id"].as_str().unwrap().to_owned();
    // In use from the start, so every delete below is refused.
    let _: serde_json::Value = app
        .created(
            "/event_subscriptions",
            json!({"description": "first", "sources": [{"type": "credential_created.v0"}],
                   "destination_ids": [destination_id]}),
        )
        .await;
    let missing = "ed_2bSVCmUvpfAqKpnAKjWKyXHyoQo";
    let answers = join_all((0..90).map(|i| {
        let (app, destination_id) = (app.clone(), destination_id.clone());
        async move {
            let subscribe = |description: String, destination: &str| {
                app.post(
                    "/event_subscriptions",
                    json!({"description": description,
                           "sources": [{"type": "credential_created.v0"}],
                           "destination_ids": [destination]}),
                )
            };
            let (kind, answer) = match i % 3 {
                0 => (
                    "kept",
                    subscribe(format!("kept {i}"), &destination_id)
                        .send(&app)
                        .await,
                ),
                1 => (
                    "missing",
                    subscribe(format!("refused {i}"), missing).send(&app).await,
                ),
                _ => (
                    "in use",
                    app.delete(&format!("/event_destinations/{destination_id}"))
                        .send(&app)
                        .await,
                ),
            };
            (i, kind, answer)
        }
    }))
    .await;
    for (i, kind, answer) in &answers {
        let wanted = match *kind {
            "kept" => 201,
            "missing" => 400,
            _ => 409,
        };
        assert_eq!(answer.status, wanted, "{i} ({kind}): {}", answer.text);
    }
    let listed: serde_json::Value = app.fetch("/event_subscriptions?limit=100").await;
    let descriptions: BTreeSet<&str> = listed["event_subscriptions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["description"].as_str().unwrap())
        .collect();
    let kept: BTreeSet<String> = answers
        .iter()
        .filter(|(_, kind, _)| *kind == "kept")
        .map(|(i, _, _)| format!("kept {i}"))
        .chain(["first".to_owned()])
        .collect();
    assert_eq!(kept.len(), 31);
    assert_eq!(
        descriptions,
        kept.iter().map(String::as_str).collect(),
        "every created subscription is there, and nothing refused"
    );
    let events: EventList = app
        .fetch("/events?type=event_subscription_created.v0&limit=100")
        .await;
    assert_eq!(events.events.len(), kept.len(), "one event per kept create");
    let still: serde_json::Value = app
        .fetch(&format!("/event_destinations/{destination_id}"))
        .await;
    assert_eq!(still["id"], json!(destination_id));
}

/// A read never answers a row older than one already answered: not older than the last write
/// answered before it began (read-your-writes, for the writer and everyone else), and not older
/// than what the same reader saw before. The `GET` of one row is answered from the rows read
/// before while nothing was committed since (docs/database.md, the row cache; on PostgreSQL
/// while the server is the cluster's one node, as here): this is that cache's contract, under
/// writes and reads of the same row at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn reads_never_answer_a_row_older_than_a_write_already_answered() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let dir = tempfile::tempdir().unwrap();
    let app = app(&dir).await;
    let created: Credential = app.created("/credentials", json!({"metadata": "0"})).await;
    let path = format!("/credentials/{}", created.id);
    let version = |c: &Credential| c.metadata.parse::<usize>().expect("a version");
    // The version of the last PATCH answered, and whether the writer is done.
    let answered = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let readers = (0..3).map(|_| {
        let (app, path, answered, done) =
            (app.clone(), path.clone(), answered.clone(), done.clone());
        async move {
            let (mut seen, mut reads) = (0, 0);
            while !done.load(Ordering::SeqCst) {
                let before = answered.load(Ordering::SeqCst);
                let read: Credential = app.fetch(&path).await;
                let got = version(&read);
                assert!(got >= before, "read {got} after {before} was answered");
                assert!(got >= seen, "read {got} after this reader saw {seen}");
                (seen, reads) = (got, reads + 1);
                // A client's next request comes over the network. In process, a read answered
                // from the cache never waits, and readers that never yield would starve the
                // tasks the writer waits on (on PostgreSQL, its connection's) until the key
                // cache's entry expires.
                tokio::task::yield_now().await;
            }
            reads
        }
    });
    let readers: Vec<_> = readers.map(tokio::spawn).collect();
    for i in 1..=60 {
        app.patched::<Credential>(&path, json!({"metadata": i.to_string()}))
            .await;
        answered.store(i, Ordering::SeqCst);
        // The writer's own next reads see its write (the second, if not the first, from the
        // cache).
        for _ in 0..2 {
            let read: Credential = app.fetch(&path).await;
            assert_eq!(version(&read), i);
        }
    }
    done.store(true, Ordering::SeqCst);
    for reader in readers {
        assert!(reader.await.expect("a reader panicked") > 0);
    }
    app.deleted(&path).await;
    app.gone(&path).await;
}
