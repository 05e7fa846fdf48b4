//! Persistence on a file database: data survives a restart, no secret is stored in clear, the
//! bootstrap key is installed once, and concurrent writes all succeed.

use crate::common::TestApp;
use crate::{contains, database_bytes, file_config};
use serde_json::json;

#[tokio::test]
async fn data_survives_a_restart_and_no_secret_is_stored_in_clear() {
    let dir = tempfile::tempdir().unwrap();
    let app = TestApp::with_config(file_config(dir.path())).await;
    let cred = app
        .create(
            "/credentials",
            json!({"description": "persisted", "acl": ["bind:a.example.com"]}),
        )
        .await;
    let ca = app
        .create(
            "/ssh_certificate_authorities",
            json!({"private_key_type": "ecdsa"}),
        )
        .await;
    let ed = app
        .create(
            "/event_destinations",
            json!({"target": {"webhook": {"url": "https://e.example/h"}}}),
        )
        .await;
    let sub = app
        .create(
            "/event_subscriptions",
            json!({"sources": [{"type": "credential_created.v0"}], "destination_ids": [ed["id"]]}),
        )
        .await;
    let token = cred["token"].as_str().unwrap().to_owned();
    let (admin_key, user_key) = (app.admin_key.clone(), app.user_key.clone());
    app.state.store.close().await;
    drop(app);

    // No authtoken, API key or private key in clear in any database file.
    let bytes = database_bytes(dir.path());
    assert!(
        contains(&bytes, "persisted"),
        "sanity: the data is in the file"
    );
    for secret in [&token, &admin_key, &user_key] {
        let (_, secret_part) = secret.split_once('_').unwrap();
        assert!(!contains(&bytes, secret), "a secret is stored in clear");
        assert!(
            !contains(&bytes, secret_part),
            "a secret part is stored in clear"
        );
    }
    assert!(!contains(&bytes, "PRIVATE KEY"));
    assert!(!contains(&bytes, "openssh-key-v1"));

    // Restart on the same files: everything is there, the keys and the token still work.
    let state = tunnel_server::state::AppState::open(file_config(dir.path()))
        .await
        .unwrap();
    let router = tunnel_server::app(state.clone());
    let app2 = TestApp {
        state: state.clone(),
        router,
        admin_key: admin_key.clone(),
        ..TestApp::new().await
    };
    let got = app2.get(cred["uri"].as_str().unwrap()).send(&app2).await;
    assert_eq!(got.status, 200, "{}", got.text);
    assert_eq!(got.json["description"], "persisted");
    assert_eq!(got.json["acl"], cred["acl"]);
    assert_eq!(
        app2.get(ca["uri"].as_str().unwrap()).send(&app2).await.json,
        ca
    );
    assert_eq!(
        app2.get(sub["uri"].as_str().unwrap())
            .send(&app2)
            .await
            .json,
        sub
    );
    assert!(
        state
            .store
            .authenticate_authtoken(&token)
            .await
            .unwrap()
            .is_some()
    );
    // The server key was kept in the data directory: the sealed CA key still opens.
    let account = state
        .store
        .authenticate_api_key(&admin_key)
        .await
        .unwrap()
        .unwrap()
        .account_id;
    let id = ca["id"].as_str().unwrap();
    let sealed = state
        .store
        .ssh_ca_sealed_key(&account, id)
        .await
        .unwrap()
        .unwrap();
    assert!(state.keys.open(&sealed, id).is_ok());
    assert!(dir.path().join("server.key").exists());
    // New ids still sort after the old ones.
    let newer = app2.create("/credentials", json!({})).await;
    assert!(newer["id"].as_str().unwrap() > cred["id"].as_str().unwrap());
    state.store.close().await;
}

/// A database that has met a server key, opened without it (no key given, no key file): refused
/// with a sentence saying where to give it, and no new key file written beside it (a backup of
/// "the database and its server.key" would keep a key that opens nothing). A wrong key given is
/// refused too, naming where the right one goes.
#[tokio::test]
async fn a_database_opened_without_its_key_is_refused_and_no_key_is_made_up() {
    let dir = tempfile::tempdir().unwrap();
    let key = "6b".repeat(32);
    let with_key = |hex: Option<&str>| {
        let mut config = file_config(dir.path());
        config.server_key = hex.map(|h| tunnel_server::secret::Secret::from(h.to_owned()));
        config
    };
    let state = tunnel_server::state::AppState::open(with_key(Some(&key)))
        .await
        .unwrap();
    state.store.close().await;
    drop(state);

    let refused = tunnel_server::state::AppState::open(with_key(None))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        refused.contains("sealed with a server key that is not here"),
        "{refused}"
    );
    assert!(refused.contains("server.key"), "{refused}");
    assert!(
        !dir.path().join("server.key").exists(),
        "no key file made up"
    );

    let wrong = "7c".repeat(32);
    let refused = tunnel_server::state::AppState::open(with_key(Some(&wrong)))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        refused.contains("not the one this database was sealed with"),
        "{refused}"
    );
    assert!(refused.contains("TUNNEL_SERVER_KEY"), "{refused}");
    // The right one still opens it.
    let state = tunnel_server::state::AppState::open(with_key(Some(&key)))
        .await
        .unwrap();
    state.store.close().await;
}

#[tokio::test]
async fn bootstrap_key_is_installed_once() {
    let dir = tempfile::tempdir().unwrap();
    let state = tunnel_server::state::AppState::open(file_config(dir.path()))
        .await
        .unwrap();
    let key = "demo-bootstrap-key-0123456789";
    tunnel_server::cli::bootstrap(&state.store, Some(key))
        .await
        .unwrap();
    tunnel_server::cli::bootstrap(&state.store, Some(key))
        .await
        .unwrap();
    let owner = state
        .store
        .authenticate_api_key(key)
        .await
        .unwrap()
        .expect("bootstrap key works");
    assert!(owner.is_admin);
    assert_eq!(state.store.list_accounts().await.unwrap().len(), 1);
    assert!(
        tunnel_server::cli::bootstrap(&state.store, Some("short"))
            .await
            .is_err()
    );
    state.store.close().await;
    assert!(!contains(&database_bytes(dir.path()), key));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_writes_on_a_file_database_all_succeed() {
    let dir = tempfile::tempdir().unwrap();
    let app = TestApp::with_config(file_config(dir.path())).await;
    let backend = app.create("/backends/tunnel_group", json!({})).await;
    let mut tasks = Vec::new();
    for i in 0..24 {
        let app = app.clone();
        let backend_id = backend["id"].clone();
        tasks.push(tokio::spawn(async move {
            match i % 3 {
                0 => {
                    app.post("/credentials", json!({"description": format!("c{i}")}))
                        .send(&app)
                        .await
                        .status
                }
                1 => {
                    let edge = app.post("/edges/tls", json!({})).send(&app).await;
                    let path = format!("/edges/tls/{}/backend", edge.json["id"].as_str().unwrap());
                    app.put(&path, json!({"backend_id": backend_id}))
                        .send(&app)
                        .await
                        .status
                }
                _ => {
                    app.delete(&format!(
                        "/backends/tunnel_group/{}",
                        backend_id.as_str().unwrap()
                    ))
                    .send(&app)
                    .await
                    .status
                }
            }
        }));
    }
    for task in tasks {
        let status = task.await.unwrap();
        // Deleting the backend is refused (409) while edges use it, or succeeds (204) before
        // any does (then 404 for later deletes and 400 for later PUTs). Never a 500.
        assert!([200, 201, 204, 400, 404, 409].contains(&status), "{status}");
    }
    let list = app.get("/credentials?limit=100").send(&app).await;
    assert_eq!(list.json["credentials"].as_array().unwrap().len(), 8);
    app.state.store.close().await;
}

/// A data directory the server makes, and every file in it (the database, its WAL and
/// shared-memory files, the search file, the lock, the server key), is its user's only: they
/// hold the audit log and the hashes of every secret. Under the usual umask SQLite alone made
/// them readable by every local user (0644).
#[cfg(unix)]
#[tokio::test]
async fn the_files_of_a_new_data_directory_are_the_owners_only() {
    use std::os::unix::fs::PermissionsExt as _;
    let parent = tempfile::tempdir().unwrap();
    let dir = parent.path().join("data");
    let _claim = file_config(&dir).database.claim().unwrap();
    let app = TestApp::with_config(file_config(&dir)).await;
    app.create("/credentials", json!({"description": "kept private"}))
        .await;
    let mode =
        |path: &std::path::Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&dir), 0o700, "the data directory");
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    // The server is running: the WAL files are there too, so that all of them are checked.
    for name in [
        "tunnel.db",
        "tunnel.db-wal",
        "tunnel.db-shm",
        "tunnel.db-search",
        "tunnel.db-server.lock",
        "server.key",
    ] {
        assert!(
            names.iter().any(|n| n == name),
            "{name} missing from {names:?}"
        );
    }
    for name in &names {
        assert_eq!(mode(&dir.join(name)), 0o600, "{name}");
    }
    app.state.store.close().await;
}
