//! What only PostgreSQL has, on a real PostgreSQL server (the run's shared cluster when
//! `TUNNEL_TEST_POSTGRES` names one, else a cluster of the test's own, stopped when it ends):
//! several servers starting at once on one empty database, the operator commands on it, and
//! `migrate` moving an installation from SQLite to PostgreSQL and back without loss
//! (docs/database.md).

use crate::common::process::{http, listen_addr, server_bin};
use serde_json::Value;
use std::net::SocketAddr;
use std::process::Stdio;
use std::time::{Duration, Instant};
use tunnel_testkit::postgres::{
    Cluster, TEST_SERVER_KEY, fresh_database, query, shared_or_own_cluster,
};

const BOOTSTRAP: &str = "postgres-test-bootstrap-key-0123456789";
const PUBLIC_URL: &str = "http://tunnel.test/api";

/// A PostgreSQL server for one test: the run's shared cluster, or one of its own (kept alive
/// by the returned guard).
fn postgres() -> (Option<Cluster>, String) {
    shared_or_own_cluster().expect("start PostgreSQL")
}

/// `tunnel-server <args>` to completion (killed after a minute, e.g. a `serve` that should
/// have refused to start): (success, stdout, stderr).
fn run(args: &[&str], key: Option<&str>) -> (bool, String, String) {
    let mut command = server_bin();
    command
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(key) = key {
        command.env("TUNNEL_SERVER_KEY", key);
    }
    let mut child = command.spawn().expect("run tunnel-server");
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let out = child.wait_with_output().expect("wait for tunnel-server");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `serve` on `database` with the bootstrap key and a fixed public URL (so `uri`s do not
/// depend on the port), `key` as its server key when given.
fn serve(database: &str, key: Option<&str>) -> (Running, SocketAddr) {
    serve_with(database, key, &[])
}

/// [`serve`] with more flags.
fn serve_with(database: &str, key: Option<&str>, flags: &[&str]) -> (Running, SocketAddr) {
    let mut command = server_bin();
    command
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--database",
            database,
            "--public-url",
            PUBLIC_URL,
        ])
        .args(flags)
        .env("TUNNEL_BOOTSTRAP_API_KEY", BOOTSTRAP)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if let Some(key) = key {
        command.env("TUNNEL_SERVER_KEY", key);
    }
    let mut child = Running(command.spawn().expect("start the server"));
    let addr = listen_addr(&mut child.0);
    (child, addr)
}

/// A server process killed when dropped, so a failing assertion leaves no server behind.
struct Running(std::process::Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// An API call as the bootstrap admin: (status, JSON body).
fn api(addr: SocketAddr, method: &str, path: &str, body: &str) -> (u16, Value) {
    api_as(addr, BOOTSTRAP, method, path, body)
}

/// An API call with the API key `key`: (status, JSON body).
fn api_as(addr: SocketAddr, key: &str, method: &str, path: &str, body: &str) -> (u16, Value) {
    let auth = format!("Bearer {key}");
    let (status, _, text) = http(
        addr,
        method,
        &format!("/api{path}"),
        &[
            ("Authorization", &auth),
            ("Service-Version", "2"),
            ("Content-Type", "application/json"),
        ],
        body,
    );
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

fn created(addr: SocketAddr, path: &str, body: &str) -> Value {
    let (status, json) = api(addr, "POST", path, body);
    assert_eq!(status, 201, "POST {path}: {json}");
    json
}

/// Everything the API shows of the installation, each list whole.
fn everything(addr: SocketAddr) -> Vec<(String, Value)> {
    [
        "/credentials?limit=100",
        "/ssh_certificate_authorities?limit=100",
        "/backends/tunnel_group?limit=100",
        "/edges/tls?limit=100",
        "/event_destinations?limit=100",
        "/event_subscriptions?limit=100",
        "/events?limit=100",
    ]
    .into_iter()
    .map(|path| {
        let (status, json) = api(addr, "GET", path, "");
        assert_eq!(status, 200, "GET {path}: {json}");
        (path.to_owned(), json)
    })
    .collect()
}

/// Every table of the schema, read here on its own (not from `migrate`'s list), so a table that
/// `migrate` forgot shows as a difference; all but the cluster's nodes and live sessions, which
/// are not moved (they end with the servers holding them).
const SCHEMA_TABLES: [&str; 14] = [
    "accounts",
    "principals",
    "api_keys",
    "credentials",
    "ssh_certificate_authorities",
    "tunnel_group_backends",
    "tls_edges",
    "event_destinations",
    "event_subscriptions",
    "event_subscription_destinations",
    "events",
    "event_deliveries",
    "event_delivery_attempts",
    "server_key_check",
];

/// Every row of every table of the database at `url`, each value with its kind (text, integer,
/// bytes in hex, null), rows in the order of all their columns: what must be equal, byte for
/// byte, between an installation and its copy.
fn dump(url: &str) -> Vec<(String, Vec<Vec<String>>)> {
    use sqlx::{Column as _, Row as _};
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        sqlx::any::install_default_drivers();
        let pool = sqlx::AnyPool::connect(url).await.unwrap();
        let mut tables = Vec::new();
        for table in SCHEMA_TABLES {
            let rows = sqlx::query(&format!("SELECT * FROM {table}"))
                .fetch_all(&pool)
                .await
                .unwrap();
            let mut values: Vec<Vec<String>> = rows
                .iter()
                .map(|row| {
                    let mut cells: Vec<(String, String)> = (0..row.len())
                        .map(|i| {
                            let name = row.column(i).name().to_owned();
                            let cell = if let Ok(v) = row.try_get::<Option<String>, _>(i) {
                                v.map_or("null".into(), |t| format!("text:{t}"))
                            } else if let Ok(v) = row.try_get::<Option<i64>, _>(i) {
                                v.map_or("null".into(), |n| format!("int:{n}"))
                            } else {
                                let bytes: Option<Vec<u8>> = row.try_get(i).unwrap();
                                bytes.map_or("null".into(), |b| {
                                    format!(
                                        "bytes:{}",
                                        b.iter().map(|x| format!("{x:02x}")).collect::<String>()
                                    )
                                })
                            };
                            (name, cell)
                        })
                        .collect();
                    // Columns by name: the two databases may order them differently.
                    cells.sort();
                    cells.into_iter().map(|(n, c)| format!("{n}={c}")).collect()
                })
                .collect();
            values.sort();
            tables.push((table.to_owned(), values));
        }
        pool.close().await;
        tables
    })
}

#[test]
fn migrate_moves_an_installation_to_postgres_and_back_without_loss() {
    let (_cluster, admin) = postgres();
    let dir = tempfile::tempdir().unwrap();
    let sqlite = format!("sqlite://{}", dir.path().join("tunnel.db").display());

    // An installation on SQLite with one of everything (the server key made in the data dir).
    let (server, addr) = serve(&sqlite, None);
    let credential = created(
        addr,
        "/credentials",
        r#"{"description":"laptop","acl":["bind:*.example.com"]}"#,
    );
    created(
        addr,
        "/ssh_certificate_authorities",
        r#"{"private_key_type":"ed25519"}"#,
    );
    let backend = created(
        addr,
        "/backends/tunnel_group",
        r#"{"labels":{"app":"web"}}"#,
    );
    let edge = created(addr, "/edges/tls", r#"{"hostports":["a.example.com:443"]}"#);
    let (status, _) = api(
        addr,
        "PUT",
        &format!("/edges/tls/{}/backend", edge["id"].as_str().unwrap()),
        &format!(r#"{{"backend_id":"{}"}}"#, backend["id"].as_str().unwrap()),
    );
    assert_eq!(status, 200);
    let destination = created(
        addr,
        "/event_destinations",
        r#"{"target":{"webhook":{"url":"https://hooks.example.com/in"}}}"#,
    );
    created(
        addr,
        "/event_subscriptions",
        &format!(
            r#"{{"sources":[{{"type":"credential_updated.v0"}}],"destination_ids":["{}"]}}"#,
            destination["id"].as_str().unwrap()
        ),
    );
    // A delivery queued for the subscription (to a host that does not answer: it stays
    // pending, with its attempts, which move too).
    let (status, _) = api(
        addr,
        "PATCH",
        &format!("/credentials/{}", credential["id"].as_str().unwrap()),
        r#"{"metadata":"moved"}"#,
    );
    assert_eq!(status, 200);
    drop(server);
    // Credentials enough for `migrate` to read them in several pages (1 000 rows each), both
    // ways, the last one partial.
    let (ok, stdout, stderr) = run(&["account", "list", "--database", &sqlite], None);
    assert!(ok, "{stderr}");
    let accounts: Vec<Value> = serde_json::from_str(&stdout).unwrap();
    let account = accounts[0]["account_id"].as_str().unwrap();
    let seed = [
        "dev",
        "seed-credentials",
        "--database",
        &sqlite,
        "--account",
        account,
        "--count",
        "2500",
    ];
    let (ok, _, stderr) = run(&seed, None);
    assert!(ok, "{stderr}");
    let (server, addr) = serve(&sqlite, None);
    let before = everything(addr);
    drop(server);

    // SQLite → PostgreSQL.
    let postgres = fresh_database(&admin).unwrap();
    let (ok, stdout, stderr) = run(&["migrate", "--from", &sqlite, "--to", &postgres], None);
    assert!(ok, "{stderr}");
    let report: Value = serde_json::from_str(&stdout).unwrap();
    let source = dump(&sqlite);
    let rows = |table: &str| {
        source
            .iter()
            .find(|(t, _)| t == table)
            .map_or(0, |(_, r)| r.len())
    };
    // Not vacuous: the copy holds the installation (its attempts depend on DNS timing).
    assert_eq!((rows("credentials"), rows("event_deliveries")), (2501, 1));
    assert_eq!(
        source,
        dump(&postgres),
        "a row or a value differs between the source and its copy"
    );
    assert_eq!(report["moved"]["credentials"], 2501, "{report}");
    // The copy's tables have statistics at once (not when autovacuum gets to them).
    let analyzed = query(
        &postgres,
        "SELECT count(*) FROM pg_stat_user_tables WHERE relname = 'credentials' AND last_analyze IS NOT NULL",
    )
    .unwrap();
    assert_eq!(analyzed.trim(), "1", "the copied tables were not analyzed");
    // The load raised the search indexes' pending-list limit for itself only (migration 9's).
    let limits = query(
        &postgres,
        r"SELECT DISTINCT array_to_string(reloptions, ',') FROM pg_class WHERE relname LIKE '%\_search'",
    )
    .unwrap();
    assert_eq!(limits.trim(), "gin_pending_list_limit=256", "{limits}");
    assert_eq!(report["moved"]["tls_edges"], 1, "{report}");
    assert_eq!(report["moved"]["event_subscription_destinations"], 1);
    assert!(report["moved"]["events"].as_u64().unwrap() >= 7, "{report}");
    assert_eq!(report["moved"]["event_deliveries"], 1, "{report}");
    let password = admin
        .split_once("://tunnel:")
        .and_then(|(_, rest)| rest.split_once('@'))
        .map(|(password, _)| password.to_owned())
        .unwrap();
    assert!(
        !stdout.contains(&password) && !stderr.contains(&password),
        "a password was printed"
    );
    assert!(report["to"].as_str().unwrap().contains(":***@"), "{report}");

    // The same installation on PostgreSQL, with the same server key (the key check passes).
    let key = std::fs::read_to_string(dir.path().join("server.key")).unwrap();
    let (server, addr) = serve(&postgres, Some(key.trim()));
    assert_eq!(
        everything(addr),
        before,
        "the installation changed on PostgreSQL"
    );
    drop(server);

    // A database that has not met a key yet (its check removed, as before the check existed)
    // adopts only a key that opens what it already holds sealed.
    query(&postgres, "DELETE FROM server_key_check").unwrap();
    let other = "11".repeat(32);
    let (ok, _, stderr) = run(
        &["serve", "--listen", "127.0.0.1:0", "--database", &postgres],
        Some(&other),
    );
    assert!(!ok, "a key that opens nothing was adopted");
    assert!(
        stderr.contains("not the one this database was sealed with"),
        "{stderr}"
    );
    let (server, addr) = serve(&postgres, Some(key.trim()));
    assert_eq!(everything(addr).len(), 7);
    drop(server);

    // A source that does not exist is an error, and is not created.
    let missing = dir.path().join("missing.db");
    let (ok, _, stderr) = run(
        &[
            "migrate",
            "--from",
            &format!("sqlite://{}", missing.display()),
            "--to",
            &fresh_database(&admin).unwrap(),
        ],
        None,
    );
    assert!(!ok);
    assert!(stderr.contains("does not exist"), "{stderr}");
    assert!(!missing.exists(), "migrate created its source");

    // A target already holding an installation is refused, and nothing is written.
    let (ok, _, stderr) = run(&["migrate", "--from", &sqlite, "--to", &postgres], None);
    assert!(!ok);
    assert!(stderr.contains("not empty"), "{stderr}");

    // And back to a new SQLite file: still the same.
    let back_dir = tempfile::tempdir().unwrap();
    let back = format!("sqlite://{}", back_dir.path().join("tunnel.db").display());
    let (ok, _, stderr) = run(&["migrate", "--from", &postgres, "--to", &back], None);
    assert!(ok, "{stderr}");
    assert_eq!(
        dump(&postgres),
        dump(&back),
        "the way back lost or changed something"
    );
    let (server, addr) = serve(&back, Some(key.trim()));
    assert_eq!(
        everything(addr),
        before,
        "the installation changed on the way back"
    );
    drop(server);
}

#[test]
fn servers_started_together_on_an_empty_database_migrate_once_and_make_one_account() {
    let (_cluster, admin) = postgres();
    let database = fresh_database(&admin).unwrap();
    let servers: Vec<_> = (0..3)
        .map(|_| {
            let mut command = server_bin();
            command
                .args(["serve", "--listen", "127.0.0.1:0", "--database", &database])
                .env("TUNNEL_SERVER_KEY", TEST_SERVER_KEY)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            Running(command.spawn().unwrap())
        })
        .collect();
    let mut banners = 0;
    for mut server in servers {
        let addr = listen_addr(&mut server.0);
        let (status, _, _) = http(
            addr,
            "GET",
            "/api/credentials",
            &[("Service-Version", "2")],
            "",
        );
        assert_eq!(status, 401, "every server serves");
        let mut stdout = server.0.stdout.take().unwrap();
        drop(server);
        let mut printed = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut printed).unwrap();
        if printed.contains("first start") {
            banners += 1;
        }
    }
    assert_eq!(banners, 1, "exactly one server made the first account");
    let versions = query(
        &database,
        "SELECT version FROM schema_migrations ORDER BY version",
    )
    .unwrap();
    let versions: Vec<&str> = versions.lines().collect();
    // One version per migration file, numbered from 1.
    let files = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/migrations/postgres"))
        .unwrap()
        .count();
    let expected: Vec<String> = (1..=files).map(|v| v.to_string()).collect();
    assert_eq!(versions, expected, "each migration applied once");
    let (ok, stdout, stderr) = run(&["account", "list", "--database", &database], None);
    assert!(ok, "{stderr}");
    let accounts: Vec<Value> = serde_json::from_str(&stdout).unwrap();
    assert_eq!(accounts.len(), 1, "{stdout}");
}

#[test]
fn operator_commands_and_the_server_key_rules_on_postgres() {
    let (_cluster, admin) = postgres();
    let database = fresh_database(&admin).unwrap();

    let (ok, stdout, stderr) = run(
        &[
            "account",
            "create",
            "--name",
            "team",
            "--database",
            &database,
        ],
        None,
    );
    assert!(ok, "{stderr}");
    let account: Value = serde_json::from_str(&stdout).unwrap();
    let account_id = account["account_id"].as_str().unwrap();
    let (ok, stdout, stderr) = run(
        &[
            "user",
            "create",
            "--account",
            account_id,
            "--bot",
            "--database",
            &database,
        ],
        None,
    );
    assert!(ok, "{stderr}");
    let bot: Value = serde_json::from_str(&stdout).unwrap();
    assert!(
        bot["user_id"].as_str().unwrap().starts_with("bot_"),
        "{bot}"
    );
    let (ok, stdout, _) = run(&["account", "list", "--database", &database], None);
    assert!(ok);
    assert!(stdout.contains("\"team\""), "{stdout}");

    // The API key made by the CLI works against a server on the same database.
    let mut command = server_bin();
    command
        .args(["serve", "--listen", "127.0.0.1:0", "--database", &database])
        .env("TUNNEL_SERVER_KEY", TEST_SERVER_KEY)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut server = Running(command.spawn().unwrap());
    let addr = listen_addr(&mut server.0);
    let (status, body) = api_as(
        addr,
        bot["api_key"].as_str().unwrap(),
        "GET",
        "/credentials",
        "",
    );
    assert_eq!(status, 200, "{body}");
    drop(server);

    // No key on PostgreSQL: refused, saying what to do. Another key: refused too.
    let serve_args = ["serve", "--listen", "127.0.0.1:0", "--database", &database];
    let (ok, _, stderr) = run(&serve_args, None);
    assert!(!ok);
    assert!(stderr.contains("TUNNEL_SERVER_KEY"), "{stderr}");
    let other = "00".repeat(32);
    let (ok, _, stderr) = run(&serve_args, Some(&other));
    assert!(!ok);
    assert!(
        stderr.contains("not the one this database was sealed with"),
        "{stderr}"
    );

    // A wrong password: a clear error, without the password.
    let wrong = database.replacen("://tunnel:", "://tunnel:wrong-secret-", 1);
    let (ok, _, stderr) = run(&["account", "list", "--database", &wrong], None);
    assert!(!ok);
    assert!(
        stderr.contains("password authentication failed"),
        "{stderr}"
    );
    assert!(!stderr.contains("wrong-secret-"), "{stderr}");
}

/// The PostgreSQL processes serving `database`'s connections, other than this query's own.
fn backends(database: &str) -> Vec<String> {
    let pids = query(
        database,
        "SELECT pid FROM pg_stat_activity WHERE datname = current_database() \
         AND pid <> pg_backend_pid()",
    )
    .unwrap();
    pids.lines().map(str::to_owned).collect()
}

/// Ends every connection to `database` from PostgreSQL's side (as a restart of the database, a
/// failover or an administrator would), and waits until their processes are gone.
fn drop_connections(database: &str) {
    let pids = backends(database);
    assert!(!pids.is_empty(), "the server holds no connection");
    let list = pids.join(",");
    query(
        database,
        &format!("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid IN ({list})"),
    )
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let left = query(
            database,
            &format!("SELECT count(*) FROM pg_stat_activity WHERE pid IN ({list})"),
        )
        .unwrap();
        if left.trim() == "0" {
            return;
        }
        assert!(Instant::now() < deadline, "connections {list} still open");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn connections_postgres_drops_are_replaced() {
    let (_cluster, admin) = postgres();
    let database = fresh_database(&admin).unwrap();
    let (_server, addr) = serve(&database, Some(TEST_SERVER_KEY));
    let credential = created(addr, "/credentials", r#"{"description":"kept"}"#);
    let id = credential["id"].as_str().unwrap();
    let one = format!("/credentials/{id}");
    let read = |path: &str| api(addr, "GET", path, "");
    assert_eq!(read(&one).0, 200);
    assert_eq!(read("/credentials?limit=10").0, 200);

    // Within the second after its connections dropped, a read may fail for each dead read
    // connection it meets (should the API key's cache entry have expired on a slow machine,
    // the authentication's lookup meets them too). A failed connection is closed, not reused:
    // once a read of each kind of read connection is served (a page of resources, on sqlx's
    // PostgreSQL driver; the users, with the other reads), the next ones are. (Not the row
    // read before: this server, the only one, may answer it from its row cache.)
    drop_connections(&database);
    for path in ["/credentials?limit=10", "/users"] {
        let mut failed = 0;
        while read(path).0 != 200 {
            failed += 1;
            assert!(
                failed < 5,
                "reads of {path} still fail after {failed} tries"
            );
        }
    }
    for _ in 0..3 {
        let (status, body) = read(&one);
        assert_eq!((status, body["description"].as_str()), (200, Some("kept")));
        let (status, body) = read("/credentials?limit=10");
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["credentials"][0]["id"], credential["id"]);
        // The audit log is read as the resources' rows are, the users on the other kind of
        // read connection.
        let (status, body) = read("/events?limit=10");
        assert_eq!(status, 200, "{body}");
        assert!(body.to_string().contains(id), "{body}");
        let (status, body) = read("/users");
        assert_eq!(status, 200, "{body}");
    }

    // A connection idle for a second or more is checked before use: after a pause nothing
    // fails, reads (the read connections) and writes (the pool's) alike.
    drop_connections(&database);
    std::thread::sleep(Duration::from_millis(1_500));
    let (status, body) = read(&one);
    assert_eq!((status, body["description"].as_str()), (200, Some("kept")));
    let (status, body) = read("/credentials?limit=10");
    assert_eq!(status, 200, "{body}");
    let (status, body) = read("/events?limit=10");
    assert_eq!(status, 200, "{body}");
    let (status, body) = read("/users");
    assert_eq!(status, 200, "{body}");
    created(addr, "/credentials", r#"{"description":"after"}"#);
    // The pool's connections name themselves too: an operator tells them apart from others'.
    let pool = query(
        &database,
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() \
         AND application_name = 'tunnel-server'",
    )
    .unwrap();
    assert!(pool.trim().parse::<usize>().unwrap() >= 1, "{pool}");
}

/// How many read connections (docs/database.md) the server holds open on `database`.
fn read_connections(database: &str) -> usize {
    let n = query(
        database,
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() \
         AND application_name = 'tunnel-server reads'",
    )
    .unwrap();
    n.trim().parse().unwrap()
}

#[test]
fn connections_postgres_idle_ones_are_closed() {
    let (_cluster, admin) = postgres();
    let database = fresh_database(&admin).unwrap();
    let flags = ["--database-idle-timeout", "1s"];
    let (_server, addr) = serve_with(&database, Some(TEST_SERVER_KEY), &flags);
    created(addr, "/credentials", r#"{"description":"kept"}"#);
    // Reads from several clients at once, on as many read connections as they need.
    std::thread::scope(|scope| {
        for _ in 0..6 {
            scope.spawn(|| {
                for _ in 0..20 {
                    let (status, body) = api(addr, "GET", "/credentials?limit=100", "");
                    assert_eq!(status, 200, "{body}");
                }
            });
        }
    });
    let opened = read_connections(&database);
    assert!(opened >= 1, "no read connection open after the reads");

    // Unused for the idle timeout, every one of them is closed, with no request to notice.
    let deadline = Instant::now() + Duration::from_secs(15);
    while read_connections(&database) > 0 {
        assert!(
            Instant::now() < deadline,
            "{} of {opened} read connections still open",
            read_connections(&database)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // And the next read opens one again: the page's, and the API key's lookup's should its
    // cache entry have expired on a slow machine (the two run on connections of two kinds).
    let (status, body) = api(addr, "GET", "/credentials?limit=100", "");
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["credentials"][0]["description"], "kept");
    let reopened = read_connections(&database);
    assert!((1..=2).contains(&reopened), "{reopened} read connections");
}
