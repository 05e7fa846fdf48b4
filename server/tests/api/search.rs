//! Searching lists (`q`, docs/api/README.md, searching): every list of resources and sessions
//! finds, case-insensitively, the items whose id, description, metadata or own fields hold the
//! text, through the trigram indexes (3 characters and more) and without them (1 or 2); the
//! search is literal text; it pages with `next_page_uri` keeping it; the index follows updates
//! (of every searched column a PATCH writes) and deletes; members search only what they reach;
//! the audit log and deliveries refuse it.

use crate::common::TestApp;
use crate::support::session;
use serde_json::{Value, json};
use tunnel_core::resources::credential::Credential;
use tunnel_server::store::{CredentialRow, DatabaseUrl, Dialect, PageQuery, Store};

/// The ids a list answers for `path` (its items under `field`), and its `next_page_uri`.
async fn found(app: &TestApp, path: &str, field: &str) -> (Vec<String>, Option<String>) {
    let resp = app.get(path).send(app).await;
    assert_eq!(resp.status, 200, "GET {path}: {}", resp.text);
    let ids = resp.json[field]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["id"].as_str().unwrap().to_owned())
        .collect();
    let next = resp.json["next_page_uri"].as_str().map(str::to_owned);
    (ids, next)
}

async fn ids(app: &TestApp, path: &str, field: &str) -> Vec<String> {
    found(app, path, field).await.0
}

async fn credential(app: &TestApp, body: Value) -> String {
    app.created::<Credential>("/credentials", body).await.id
}

#[tokio::test]
async fn credentials_are_found_by_every_field_case_insensitively() {
    let app = TestApp::new().await;
    let laptop = credential(
        &app,
        json!({"description": "Ops-Laptop", "metadata": "{\"team\":\"Platform\"}"}),
    )
    .await;
    let edge = credential(
        &app,
        json!({"description": "edge", "acl": ["bind:*.Example.org", "bind:env=prod"]}),
    )
    .await;
    let percent = credential(&app, json!({"description": "100% done_now"})).await;
    let split = credential(&app, json!({"description": "left-", "metadata": "-right"})).await;
    let members = app
        .created_by::<Credential>(
            &app.user_key,
            "/credentials",
            json!({"description": "mine"}),
        )
        .await
        .id;
    let everything = [&members, &split, &percent, &edge, &laptop];
    let all = |list: &[&String]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();

    for (q, expected) in [
        ("laptop", vec![&laptop]),
        ("OPS-LAP", vec![&laptop]),
        ("platform", vec![&laptop]),
        ("example.ORG", vec![&edge]),
        ("env=prod", vec![&edge]),
        // Literal text: `%` and `_` are not wildcards, `"` is not syntax.
        ("100%", vec![&percent]),
        ("e_n", vec![&percent]),
        ("%", vec![&percent]),
        ("\"team\"", vec![&laptop]),
        // One or two characters, without the index (none that a random id could hold).
        ("S-", vec![&laptop]),
        ("-q", vec![]),
        ("nothing like it", vec![]),
        // Within one field, never across two ("left-" then "-right").
        ("t-", vec![&split]),
        ("-r", vec![&split]),
        ("- ", vec![]),
        ("- -", vec![]),
        ("left- -right", vec![]),
    ] {
        let path = format!("/credentials?q={}", urlencode(q));
        assert_eq!(
            ids(&app, &path, "credentials").await,
            all(&expected),
            "q={q:?}"
        );
    }
    // Ids and owners are searched too.
    let tail = &laptop[laptop.len() - 8..];
    assert_eq!(
        ids(&app, &format!("/credentials?q={tail}"), "credentials").await,
        std::slice::from_ref(&laptop)
    );
    assert_eq!(
        ids(
            &app,
            &format!("/credentials?q={}", app.user_id),
            "credentials"
        )
        .await,
        std::slice::from_ref(&members)
    );
    assert_eq!(
        ids(&app, "/credentials?q=cr_", "credentials").await,
        all(&everything)
    );
    // An empty search is no search.
    assert_eq!(ids(&app, "/credentials?q=", "credentials").await.len(), 5);
}

#[tokio::test]
async fn a_search_pages_with_its_next_page_uri_and_follows_updates_and_deletes() {
    let app = TestApp::new().await;
    let mut wanted = Vec::new();
    for i in 0..7 {
        wanted.push(credential(&app, json!({"description": format!("batch-{i} keep")})).await);
        credential(&app, json!({"description": format!("other-{i}")})).await;
    }
    wanted.reverse();
    let (first, next) = found(&app, "/credentials?q=KEEP&limit=3", "credentials").await;
    let next = next.expect("a second page");
    assert!(
        next.contains("q=KEEP") && next.contains("limit=3"),
        "{next}"
    );
    let (second, next) = found(&app, &next, "credentials").await;
    let (third, last) = found(&app, &next.unwrap(), "credentials").await;
    assert_eq!(last, None);
    assert_eq!([first, second, third].concat(), wanted);

    // An update moves a credential in and out of a search; a delete takes it out.
    let moved = &wanted[0];
    app.patched::<Value>(
        &format!("/credentials/{moved}"),
        json!({"description": "renamed"}),
    )
    .await;
    assert!(
        !ids(&app, "/credentials?q=keep", "credentials")
            .await
            .contains(moved)
    );
    assert_eq!(
        ids(&app, "/credentials?q=renamed", "credentials").await,
        std::slice::from_ref(moved)
    );
    app.deleted(&format!("/credentials/{moved}")).await;
    assert!(
        ids(&app, "/credentials?q=renamed", "credentials")
            .await
            .is_empty()
    );
}

/// On SQLite a search finds the same rows whether the search index has reached them or not: the
/// rows changed since the indexer's last pass (created, renamed, deleted) are read themselves.
/// Each search runs right after its write (the indexer passes every 200 ms), then again once
/// the index holds everything. On PostgreSQL, where every write indexes its rows, the same
/// searches hold.
#[tokio::test]
async fn a_search_finds_the_same_before_and_after_the_index_holds_the_change() {
    let app = TestApp::new().await;
    let store = &app.state.store;
    let mut keep = Vec::new();
    for i in 0..3 {
        keep.push(credential(&app, json!({"description": format!("keep-{i}")})).await);
        credential(&app, json!({"description": format!("drop-{i}")})).await;
    }
    keep.reverse();
    let searches = async |keep: &[String], renamed: &[String]| {
        for _ in 0..2 {
            assert_eq!(ids(&app, "/credentials?q=KEEP", "credentials").await, keep);
            assert_eq!(
                ids(&app, "/credentials?q=renamed", "credentials").await,
                renamed
            );
            store.settle_search().await.unwrap();
        }
    };
    searches(&keep, &[]).await;
    let moved = keep.remove(0);
    app.patched::<Value>(
        &format!("/credentials/{moved}"),
        json!({"description": "renamed"}),
    )
    .await;
    searches(&keep, std::slice::from_ref(&moved)).await;
    app.deleted(&format!("/credentials/{moved}")).await;
    let gone = keep.remove(1);
    app.deleted(&format!("/credentials/{gone}")).await;
    searches(&keep, &[]).await;

    // SQLite's trigram index folds case beyond ASCII (PostgreSQL's columns fold ASCII only).
    if app.state.config.database.dialect() == Dialect::Sqlite {
        let umlaut = credential(&app, json!({"description": "Übersicht"})).await;
        store.settle_search().await.unwrap();
        assert_eq!(
            ids(&app, "/credentials?q=%C3%BCBERSICHT", "credentials").await,
            [umlaut]
        );
    }
}

/// SQLite's search index is a file of its own beside the database, built for that database:
/// lost, or replaced by the index of another database, it is rebuilt at start, and searches
/// find every row meanwhile.
#[tokio::test]
async fn a_search_index_lost_or_of_another_database_is_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tunnel.db");
    let url = DatabaseUrl::SqliteFile(path.clone());
    let index = dir.path().join("tunnel.db-search");
    let store = Store::open(&url).await.unwrap();
    let account = store.create_account("a", "Ada").await.unwrap().account_id;
    // Seeding waits for the index; "seeded credential 1" is in 1 and 10–19.
    store.seed_credentials(&account, 30).await.unwrap();
    let page = PageQuery {
        limit: 100,
        before_id: None,
        q: Some("seeded credential 1".to_owned()),
        oldest_first: false,
    };
    let found = async |store: &Store| {
        let before = store.list::<CredentialRow>(&account, &page).await.unwrap();
        store.settle_search().await.unwrap();
        let after = store.list::<CredentialRow>(&account, &page).await.unwrap();
        (before.len(), after.len())
    };
    assert_eq!(found(&store).await, (11, 11));
    store.close().await;

    std::fs::remove_file(&index).unwrap();
    let store = Store::open(&url).await.unwrap();
    assert_eq!(found(&store).await, (11, 11), "the index was lost");
    store.close().await;

    let other = Store::open(&DatabaseUrl::SqliteFile(dir.path().join("other.db")))
        .await
        .unwrap();
    let stranger = other.create_account("b", "Bo").await.unwrap().account_id;
    other.seed_credentials(&stranger, 5).await.unwrap();
    other.close().await;
    std::fs::copy(dir.path().join("other.db-search"), &index).unwrap();
    let store = Store::open(&url).await.unwrap();
    assert_eq!(found(&store).await, (11, 11), "the index was another's");
    store.close().await;
}

/// On SQLite only the search indexer writes the search file, and a write of the database never
/// waits for it: with the file's write lock held as an indexer's pass holds it, writes through
/// the pool (a user) and direct ones (a credential) go through, and searches find them.
#[tokio::test]
async fn writes_never_wait_for_the_search_index() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = crate::common::test_config();
    config.database = DatabaseUrl::SqliteFile(dir.path().join("tunnel.db"));
    let app = TestApp::with_config(config).await;
    let index = rusqlite::Connection::open(dir.path().join("tunnel.db-search")).unwrap();
    index.execute_batch("BEGIN IMMEDIATE").unwrap();
    let made = credential(&app, json!({"description": "while locked"})).await;
    app.principal(&app.account_id, false).await;
    assert_eq!(
        ids(&app, "/credentials?q=LOCKED", "credentials").await,
        [made]
    );
    index.execute_batch("ROLLBACK").unwrap();
}

/// Whether the list at `collection` (items under `field`) finds exactly `id` for each of
/// `found` and nothing for each of `gone` (searches of 3 characters or more go through the
/// trigram index, shorter ones not).
async fn finds(
    app: &TestApp,
    collection: &str,
    field: &str,
    id: &str,
    found: &[&str],
    gone: &[&str],
) {
    for q in found {
        let path = format!("{collection}?q={}", urlencode(q));
        assert_eq!(ids(app, &path, field).await, [id], "q={q:?}");
    }
    for q in gone {
        let path = format!("{collection}?q={}", urlencode(q));
        assert!(ids(app, &path, field).await.is_empty(), "q={q:?}");
    }
}

#[tokio::test]
async fn backends_and_tls_edges_are_found_by_what_an_update_wrote() {
    let app = TestApp::new().await;
    let collection = "/backends/tunnel_group";
    let body =
        json!({"description": "Amber", "metadata": "m-old", "labels": {"region": "eu-west"}});
    let backend = app.create(collection, body).await;
    let id = backend["id"].as_str().unwrap();
    app.create(collection, json!({"labels": {"site": "us-east"}}))
        .await;
    let path = format!("{collection}/{id}");
    app.patched::<Value>(&path, json!({"description": "Crimson"}))
        .await;
    finds(
        &app,
        collection,
        "backends",
        id,
        &["crimson", "eu-west"],
        &["amber"],
    )
    .await;
    app.patched::<Value>(&path, json!({"metadata": "m-new"}))
        .await;
    finds(&app, collection, "backends", id, &["M-NEW"], &["m-old"]).await;
    // Labels replaced: the old ones are no longer found, the new ones are (keys and values).
    // "7-" is searched without the index (2 characters), and no random id could hold it.
    app.patched::<Value>(&path, json!({"labels": {"zone": "ap-south", "Q": "7-z"}}))
        .await;
    finds(
        &app,
        collection,
        "backends",
        id,
        &["ap-south", "zone", "7-"],
        &["eu-west", "region"],
    )
    .await;

    let collection = "/edges/tls";
    let body = json!({"description": "Amber", "hostports": ["old-shop.example.com:443"]});
    let edge = app.create(collection, body).await;
    let id = edge["id"].as_str().unwrap();
    app.create(collection, json!({"hostports": ["other.example.com:443"]}))
        .await;
    let path = format!("{collection}/{id}");
    app.patched::<Value>(
        &path,
        json!({"description": "Crimson", "metadata": "m-new"}),
    )
    .await;
    finds(
        &app,
        collection,
        "tls_edges",
        id,
        &["crimson", "m-new", "old-shop"],
        &["amber"],
    )
    .await;
    app.patched::<Value>(&path, json!({"hostports": ["new-shop.example.com:8443"]}))
        .await;
    finds(
        &app,
        collection,
        "tls_edges",
        id,
        &["NEW-SHOP", ":8443"],
        &["old-shop"],
    )
    .await;
    // Another account never finds them, however they were written.
    let theirs = app
        .get("/edges/tls?q=new-shop")
        .key(&app.other_key)
        .send(&app)
        .await;
    assert_eq!(theirs.json["tls_edges"], json!([]));
}

#[tokio::test]
async fn every_resource_list_searches_its_own_fields() {
    let app = TestApp::new().await;
    let ecdsa = app
        .create(
            "/ssh_certificate_authorities",
            json!({"private_key_type": "ecdsa"}),
        )
        .await;
    app.create("/ssh_certificate_authorities", json!({})).await;
    assert_eq!(
        ids(
            &app,
            "/ssh_certificate_authorities?q=ECDSA",
            "ssh_certificate_authorities"
        )
        .await,
        [ecdsa["id"].as_str().unwrap()]
    );
    let backend = app
        .create(
            "/backends/tunnel_group",
            json!({"labels": {"region": "eu-west"}}),
        )
        .await;
    app.create("/backends/tunnel_group", json!({})).await;
    assert_eq!(
        ids(&app, "/backends/tunnel_group?q=eu-west", "backends").await,
        [backend["id"].as_str().unwrap()]
    );
    let edge = app
        .create("/edges/tls", json!({"hostports": ["shop.example.com:443"]}))
        .await;
    app.create("/edges/tls", json!({})).await;
    assert_eq!(
        ids(&app, "/edges/tls?q=shop.example", "tls_edges").await,
        [edge["id"].as_str().unwrap()]
    );
    let destination = app
        .create(
            "/event_destinations",
            json!({"target": {"webhook": {"url": "https://hooks.example.com/billing"}}}),
        )
        .await;
    app.create(
        "/event_destinations",
        json!({"target": {"webhook": {"url": "https://hooks.example.com/other"}}}),
    )
    .await;
    assert_eq!(
        ids(&app, "/event_destinations?q=billing", "event_destinations").await,
        [destination["id"].as_str().unwrap()]
    );
    let subscription = app
        .create(
            "/event_subscriptions",
            json!({"sources": [{"type": "tls_edge_created.v0"}]}),
        )
        .await;
    app.create("/event_subscriptions", json!({})).await;
    assert_eq!(
        ids(
            &app,
            "/event_subscriptions?q=tls_edge_created",
            "event_subscriptions"
        )
        .await,
        [subscription["id"].as_str().unwrap()]
    );
    // API keys: by description and owner, and a member finds only what they reach.
    let key = app
        .create(
            "/api_keys",
            json!({"description": "deploy bot", "owner_id": app.user_id}),
        )
        .await;
    assert_eq!(
        ids(&app, "/api_keys?q=DEPLOY", "keys").await,
        [key["id"].as_str().unwrap()]
    );
    let admins = app
        .get(&format!("/api_keys?q={}", app.admin_id))
        .key(&app.user_key)
        .send(&app)
        .await;
    assert_eq!(admins.status, 200);
    assert_eq!(
        admins.json["keys"],
        json!([]),
        "a member does not find the admin's keys"
    );
    // Another account's resources are never found.
    let theirs = app
        .get("/edges/tls?q=shop")
        .key(&app.other_key)
        .send(&app)
        .await;
    assert_eq!(theirs.json["tls_edges"], json!([]));
}

#[tokio::test]
async fn a_backend_is_found_by_a_label_written_as_the_console_shows_it() {
    let app = TestApp::new().await;
    let mut made = Vec::new();
    for body in [
        json!({"labels": {"env": "prod", "app": "web"}}),
        json!({"labels": {"env": "staging", "team": "prod"}}),
        json!({"description": "env=prod, as text"}),
        json!({"labels": {"env": "production"}}),
        // The label's stored form outside the labels is text like any other.
        json!({"metadata": r#"{"env":"prod"}"#}),
    ] {
        let backend = app.create("/backends/tunnel_group", body).await;
        made.push(backend["id"].as_str().unwrap().to_owned());
    }
    let [prod, staging, text, production, _] = [0, 1, 2, 3, 4].map(|i| made[i].as_str());
    let search = |q: &str| {
        let path = format!("/backends/tunnel_group?q={}", urlencode(q));
        let app = app.clone();
        async move { ids(&app, &path, "backends").await }
    };
    // Before and after the search index holds the rows (SQLite's indexer works behind the
    // writes): the same answers.
    for _ in 0..2 {
        // Newest first; a label as `key=value` or any part of it, the description as written.
        assert_eq!(search("env=prod").await, [production, text, prod]);
        assert_eq!(search("ENV=Prod").await, [production, text, prod]);
        assert_eq!(search("v=prod").await, [production, text, prod]);
        assert_eq!(search("team=prod").await, [staging]);
        assert_eq!(search("=staging").await, [staging]);
        assert_eq!(search("app=").await, [prod]);
        // Two characters: no trigram index, the same answer.
        assert_eq!(search("=s").await, [staging]);
        // Never across two labels, nor a second `=`.
        assert!(search("prod app=web").await.is_empty());
        assert!(search("env=prod=x").await.is_empty());
        app.state.store.settle_search().await.unwrap();
    }
}

#[tokio::test]
async fn sessions_are_found_by_ip_os_version_metadata_and_credential() {
    let app = TestApp::new().await;
    let mut ids_by_n = Vec::new();
    for n in 0..4 {
        let mut live = session(&app, n, &app.account_id, &format!("cr_{n}abc"));
        live.session.ip = format!("10.0.{n}.7");
        live.session.os = if n == 2 {
            "windows".into()
        } else {
            "linux".into()
        };
        live.session.agent_version = format!("3.{n}.1");
        live.session.metadata = format!("rack-{n}");
        ids_by_n.push(live.session.id.clone());
        app.state.sessions().register(live).await.unwrap();
    }
    for (q, n) in [
        ("10.0.1.", 1),
        ("WINDOWS", 2),
        ("3.3.1", 3),
        ("rack-0", 0),
        ("cr_1abc", 1),
    ] {
        assert_eq!(
            ids(&app, &format!("/tunnel_sessions?q={q}"), "tunnel_sessions").await,
            [ids_by_n[n].clone()],
            "q={q}"
        );
    }
    let (page, next) = found(&app, "/tunnel_sessions?q=linux&limit=2", "tunnel_sessions").await;
    assert_eq!(page, [ids_by_n[3].clone(), ids_by_n[1].clone()]);
    let (rest, _) = found(&app, &next.unwrap(), "tunnel_sessions").await;
    assert_eq!(rest, [ids_by_n[0].clone()]);
    // Only those: not a field's name, the region, the transport, a `uri`, an update target.
    for q in [
        "local",
        "region",
        "http",
        "tunnel/v2",
        "agent_update",
        "true",
        "started",
    ] {
        assert!(
            ids(&app, &format!("/tunnel_sessions?q={q}"), "tunnel_sessions")
                .await
                .is_empty(),
            "q={q}"
        );
    }
}

#[tokio::test]
async fn a_search_is_bounded_and_only_where_it_is_offered() {
    let app = TestApp::new().await;
    app.get(&format!("/credentials?q={}", "a".repeat(256)))
        .send(&app)
        .await
        .error_at(400, "ERR_TUNNEL_116", "q");
    app.get(&format!("/credentials?q={}", "é".repeat(255)))
        .send(&app)
        .await;
    for path in ["/events?q=x", "/credentials/cr_1?q=x"] {
        app.get(path).send(&app).await.error(400, "ERR_TUNNEL_115");
    }
}

fn urlencode(q: &str) -> String {
    form_urlencoded::byte_serialize(q.as_bytes()).collect()
}

/// On SQLite a search with few matches reads them, and one with many walks the account's rows
/// in order (server/src/store/search.rs); both answer the same pages. 10 050 seeded
/// credentials: "seeded" matches them all (more than the 10 000 that make a search narrow),
/// "credential 100" matches 61 (100, 1000–1009 and 10000–10049).
#[tokio::test]
async fn broad_and_narrow_searches_of_a_large_account_page_alike() {
    let app = TestApp::new().await;
    let seeded = app
        .state
        .store
        .seed_credentials(&app.account_id, 10_050)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(seeded.inserted, 10_050);

    // Broad: the newest (or oldest) first, as the plain list has them.
    for order in ["newest", "oldest"] {
        let plain = ids(
            &app,
            &format!("/credentials?limit=7&order={order}"),
            "credentials",
        )
        .await;
        let (searched, next) = found(
            &app,
            &format!("/credentials?q=SEEDED&limit=7&order={order}"),
            "credentials",
        )
        .await;
        assert_eq!(searched, plain, "{order}");
        let (second, _) = found(&app, &next.unwrap(), "credentials").await;
        let plain_second = ids(
            &app,
            &format!("/credentials?limit=7&order={order}&before_id={}", plain[6]),
            "credentials",
        )
        .await;
        assert_eq!(second, plain_second, "{order}");
    }

    // Narrow: every match once, in order, across pages.
    let mut all = Vec::new();
    let mut next = Some(format!(
        "/credentials?q={}&limit=20",
        urlencode("credential 100")
    ));
    while let Some(path) = next {
        let resp = app.get(&path).send(&app).await;
        assert_eq!(resp.status, 200, "{}", resp.text);
        for item in resp.json["credentials"].as_array().unwrap() {
            let description = item["description"].as_str().unwrap();
            assert!(description.contains("credential 100"), "{description}");
            all.push(item["id"].as_str().unwrap().to_owned());
        }
        next = resp.json["next_page_uri"].as_str().map(str::to_owned);
    }
    assert_eq!(all.len(), 61);
    let mut sorted = all.clone();
    sorted.sort();
    sorted.reverse();
    sorted.dedup();
    assert_eq!(all, sorted, "newest first, none twice");

    // Narrow and past a cursor: one credential by its own id.
    let middle = &seeded.middle_id;
    assert_eq!(
        ids(
            &app,
            &format!("/credentials?q={}", &middle[8..]),
            "credentials"
        )
        .await,
        std::slice::from_ref(middle)
    );
}
