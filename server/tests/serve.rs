//! Tests over real files and sockets: persistence across a restart on a file database, no
//! secret in clear in the database files, the operator CLI and `serve` as a real process, and
//! the API over a real TCP connection.

mod common;

use common::TestApp;
use serde_json::{Value, json};
use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{SocketAddr, TcpStream};
use std::process::{Command, Stdio};
use std::time::Duration;
use tunnel_server::config::Config;
use tunnel_server::store::DatabaseUrl;

fn file_config(dir: &std::path::Path) -> Config {
    let mut config = Config::in_memory();
    config.database = DatabaseUrl::SqliteFile(dir.join("tunnel.db"));
    config
}

/// Every byte of the database files (main file, WAL, shared memory).
///
/// The last connection's close checkpoints the WAL and removes the `-wal` and `-shm` files,
/// possibly just after the pool reports closed; a file that vanishes mid-read means the files
/// were changing, so the whole read starts over (bounded) to get one consistent picture.
fn database_bytes(dir: &std::path::Path) -> Vec<u8> {
    'attempt: for _ in 0..100 {
        let mut all = Vec::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if !name.starts_with("tunnel.db") {
                continue;
            }
            match std::fs::read(&path) {
                Ok(bytes) => all.extend(bytes),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                    continue 'attempt;
                }
                Err(e) => panic!("reading {name}: {e}"),
            }
        }
        return all;
    }
    panic!("the database files kept changing for 2 s after the store was closed")
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

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
            json!({"sources": [{"type": "ip_policy_created.v0"}], "destination_ids": [ed["id"]]}),
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

fn server_bin() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tunnel-server"));
    cmd.env("NO_COLOR", "1")
        .env("RUST_LOG", "info")
        .env_remove("TUNNEL_BOOTSTRAP_API_KEY")
        .env_remove("TUNNEL_DATABASE");
    cmd
}

fn run_json(args: &[&str]) -> Value {
    let out = server_bin().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

/// A minimal HTTP/1.1 client over a real socket.
fn http(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String, String) {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    (status, head.to_owned(), body.to_owned())
}

#[test]
fn operator_cli_and_serve_as_real_processes() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("data/tunnel.db").display());
    let created = run_json(&["account", "create", "--name", "acme", "--database", &db]);
    let account_id = created["account_id"].as_str().unwrap();
    assert!(account_id.starts_with("acct_"));
    assert!(created["user_id"].as_str().unwrap().starts_with("usr_"));
    let admin_key = created["api_key"].as_str().unwrap().to_owned();
    let bot = run_json(&[
        "user",
        "create",
        "--account",
        account_id,
        "--bot",
        "--database",
        &db,
    ]);
    assert!(bot["user_id"].as_str().unwrap().starts_with("bot_"));
    let user = run_json(&["user", "create", "--account", account_id, "--database", &db]);
    assert!(user["user_id"].as_str().unwrap().starts_with("usr_"));
    let list = run_json(&["account", "list", "--database", &db]);
    assert_eq!(list, json!([{"account_id": account_id, "name": "acme"}]));
    let out = server_bin()
        .args([
            "user",
            "create",
            "--account",
            "acct_missing",
            "--database",
            &db,
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());

    // `serve` on that database: the CLI-made key works over a real socket.
    let mut child = server_bin()
        .args(["serve", "--listen", "127.0.0.1:0", "--database", &db])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let addr = listen_addr(&mut child);
    let auth = format!("Bearer {admin_key}");
    let headers = [
        ("Authorization", auth.as_str()),
        ("Service-Version", "2"),
        ("Content-Type", "application/json"),
    ];
    let (status, _, body) = http(
        addr,
        "POST",
        "/api/credentials",
        &headers,
        r#"{"description":"over tcp"}"#,
    );
    assert_eq!(status, 201, "{body}");
    let cred: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        cred["uri"].as_str().unwrap(),
        format!(
            "http://{addr}/api/credentials/{}",
            cred["id"].as_str().unwrap()
        )
    );
    let (status, head, body) = http(addr, "GET", "/api/credentials", &headers[..1], "");
    assert_eq!(status, 400, "{body}");
    assert!(
        head.to_ascii_lowercase().contains("operation-id: op_"),
        "{head}"
    );
    let (status, _, _) = http(addr, "GET", "/", &[], "");
    assert_eq!(status, 404, "no console dir: no console");
    let (status, _, body) = http(addr, "GET", "/api/openapi.json", &[], "");
    assert_eq!(status, 200, "{body}");
    stop(child);
}

#[test]
fn first_start_prints_the_admin_key_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("tunnel.db").display());
    let console = dir.path().join("dist");
    std::fs::create_dir_all(&console).unwrap();
    std::fs::write(console.join("index.html"), "<html>console</html>").unwrap();
    let mut child = server_bin()
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--database",
            &db,
            "--console-dir",
        ])
        .arg(&console)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The banner is printed before the server listens.
    let stdout = child.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    let key = loop {
        let line = lines.next().expect("banner with the key").unwrap();
        let trimmed = line.trim();
        if tunnel_core::ids::SecretToken::parse(trimmed).is_some() {
            break trimmed.to_owned();
        }
    };
    let addr = listen_addr(&mut child);
    let auth = format!("Bearer {key}");
    let (status, _, body) = http(
        addr,
        "GET",
        "/api/credentials",
        &[("Authorization", &auth), ("Service-Version", "2")],
        "",
    );
    assert_eq!(status, 200, "{body}");
    let (status, _, body) = http(addr, "GET", "/tunnel-sessions/deep/link", &[], "");
    assert_eq!((status, body.as_str()), (200, "<html>console</html>"));
    stop(child);

    // Second start: no new account, no key printed.
    let out = server_bin()
        .args(["account", "list", "--database", &db])
        .output()
        .unwrap();
    let accounts: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(accounts.as_array().unwrap().len(), 1);
    let mut child = server_bin()
        .args(["serve", "--listen", "127.0.0.1:0", "--database", &db])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let _ = listen_addr(&mut child);
    child.kill().unwrap();
    let mut printed = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut printed)
        .unwrap();
    let _ = child.wait();
    assert!(
        !printed.contains(&key) && !printed.contains("API key"),
        "{printed}"
    );
}

/// Reads the server's log (stderr) until it says where it listens.
fn listen_addr(child: &mut std::process::Child) -> SocketAddr {
    let stderr = child.stderr.take().unwrap();
    let mut reader = BufReader::new(stderr);
    let mut line = String::new();
    loop {
        line.clear();
        assert!(
            reader.read_line(&mut line).unwrap() > 0,
            "server exited before listening"
        );
        if let Some(rest) = line.split("listen=").nth(1) {
            let addr = rest.split_whitespace().next().unwrap().parse().unwrap();
            // Keep draining the log so the server never blocks on a full pipe.
            std::thread::spawn(move || std::io::copy(&mut reader, &mut std::io::sink()));
            return addr;
        }
    }
}

fn stop(mut child: std::process::Child) {
    child.kill().unwrap();
    let _ = child.wait();
}

#[tokio::test]
async fn in_process_server_over_a_real_socket() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let mut config = Config::in_memory();
    config.listen = addr;
    config.public_url = Config::default_public_url(addr);
    let state = tunnel_server::state::AppState::open(config).await.unwrap();
    let created = state.store.create_account("sock").await.unwrap();
    let app = tunnel_server::app(state);
    let server = tokio::spawn(async move {
        axum::serve(
            listener,
            app.into_make_service_with_connect_info::<SocketAddr>(),
        )
        .await
        .unwrap();
    });
    let key = created.api_key.clone();
    let (status, body) = tokio::task::spawn_blocking(move || {
        let auth = format!("Bearer {key}");
        let headers = [
            ("Authorization", auth.as_str()),
            ("Service-Version", "2"),
            ("Content-Type", "application/json"),
        ];
        let (status, _, body) = http(
            addr,
            "POST",
            "/api/ssh_certificate_authorities",
            &headers,
            "{}",
        );
        assert_eq!(status, 201, "{body}");
        let (status, _, body) = http(addr, "POST", "/api/credentials", &headers, "not json");
        assert_eq!(status, 400, "{body}");
        let (status, _, body) = http(
            addr,
            "GET",
            "/api/credentials",
            &[("Service-Version", "2")],
            "",
        );
        assert_eq!(status, 401, "{body}");
        http(
            addr,
            "GET",
            "/api/ssh_certificate_authorities?limit=1",
            &headers[..2],
            "",
        )
    })
    .await
    .map(|(s, _, b)| (s, b))
    .unwrap();
    assert_eq!(status, 200, "{body}");
    let list: Value = serde_json::from_str(&body).unwrap();
    assert!(
        list["ssh_certificate_authorities"][0]["uri"]
            .as_str()
            .unwrap()
            .starts_with(&format!("http://{addr}/api/"))
    );
    server.abort();
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
