//! The operator CLI (`docs/command-line.md`) and `serve` as real processes: accounts and users
//! created from the command line, their keys working over a real socket, and the admin key
//! printed once on the first start.

use crate::api_headers;
use crate::common::process::{
    agent_handshake, http, listen_addr, listener_addrs, send_text_frame, serve_command, server_bin,
    stop,
};
use serde_json::{Value, json};
use std::io::{BufRead as _, BufReader, Read as _};

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
    let mut child = serve_command(&db).spawn().unwrap();
    let addr = listen_addr(&mut child);
    let auth = format!("Bearer {admin_key}");
    let headers = api_headers(&auth);
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

/// Users get names on the command line (at creation, or later with `user rename`), which the
/// API's `/users` and `/me` show; bad names are refused with the flag named.
#[test]
fn users_are_named_and_renamed_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("tunnel.db").display());
    let created = run_json(&[
        "account",
        "create",
        "--admin-name",
        " Ada Lovelace ",
        "--database",
        &db,
    ]);
    let (account, admin) = (
        created["account_id"].as_str().unwrap(),
        created["user_id"].as_str().unwrap(),
    );
    let bot = run_json(&[
        "user",
        "create",
        "--account",
        account,
        "--bot",
        "--name",
        "CI deploys",
        "--database",
        &db,
    ]);
    let bot_id = bot["user_id"].as_str().unwrap();
    let renamed = run_json(&[
        "user",
        "rename",
        "--id",
        bot_id,
        "--name",
        "Release bot",
        "--database",
        &db,
    ]);
    assert_eq!(renamed, json!({"user_id": bot_id, "name": "Release bot"}));
    let listed = run_json(&["user", "list", "--account", account, "--database", &db]);
    assert_eq!(
        listed,
        json!([
            {"user_id": admin, "name": "Ada Lovelace", "kind": "user", "is_admin": true},
            {"user_id": bot_id, "name": "Release bot", "kind": "bot", "is_admin": false},
        ])
    );
    // Refused: too long, a control character, an unknown user, an unknown account.
    let fails = |args: &[&str]| {
        let out = server_bin().args(args).output().unwrap();
        assert!(!out.status.success(), "{args:?} succeeded");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let long = "n".repeat(65);
    let err = fails(&[
        "user",
        "rename",
        "--id",
        bot_id,
        "--name",
        &long,
        "--database",
        &db,
    ]);
    assert!(
        err.contains("--name: name must be at most 64 characters"),
        "{err}"
    );
    let err = fails(&[
        "user",
        "rename",
        "--id",
        bot_id,
        "--name",
        "a\tb",
        "--database",
        &db,
    ]);
    assert!(err.contains("control characters"), "{err}");
    let missing = "usr_0EReR4WWfBto6iBJ0GJMqrlZ2Yd";
    let err = fails(&[
        "user",
        "rename",
        "--id",
        missing,
        "--name",
        "x",
        "--database",
        &db,
    ]);
    assert!(err.contains("no user or bot"), "{err}");
    let err = fails(&[
        "user",
        "list",
        "--account",
        "acct_missing",
        "--database",
        &db,
    ]);
    assert!(err.contains("no account"), "{err}");

    // The server shows the names.
    let mut child = serve_command(&db).spawn().unwrap();
    let addr = listen_addr(&mut child);
    let auth = format!("Bearer {}", created["api_key"].as_str().unwrap());
    let headers = api_headers(&auth);
    let (status, _, body) = http(addr, "GET", "/api/me", &headers, "");
    assert_eq!(status, 200, "{body}");
    let me: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(me["principal_name"], "Ada Lovelace");
    let (status, _, body) = http(addr, "GET", &format!("/api/users/{bot_id}"), &headers, "");
    assert_eq!(status, 200, "{body}");
    let user: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        (&user["name"], &user["kind"]),
        (&json!("Release bot"), &json!("bot"))
    );
    stop(child);
}

/// `user role`: a bot made an admin, then the first admin made a member (another admin is
/// left); the last admin cannot be made a member, and the server applies the roles.
#[test]
fn roles_are_given_and_taken_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("tunnel.db").display());
    let created = run_json(&["account", "create", "--database", &db]);
    let (account, admin) = (
        created["account_id"].as_str().unwrap(),
        created["user_id"].as_str().unwrap(),
    );
    let role = |id: &str, role: &str| {
        server_bin()
            .args([
                "user",
                "role",
                "--id",
                id,
                "--role",
                role,
                "--database",
                &db,
            ])
            .output()
            .unwrap()
    };
    // The only admin stays one.
    let out = role(admin, "member");
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("the last admin of its account"), "{said}");
    let bot = run_json(&[
        "user",
        "create",
        "--account",
        account,
        "--bot",
        "--database",
        &db,
    ]);
    let bot_id = bot["user_id"].as_str().unwrap();
    let out = role(bot_id, "admin");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let shown: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(shown, json!({"user_id": bot_id, "is_admin": true}));
    let out = role(admin, "member");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let listed = run_json(&["user", "list", "--account", account, "--database", &db]);
    let roles: Vec<(&str, bool)> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|u| {
            (
                u["user_id"].as_str().unwrap(),
                u["is_admin"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(roles, [(admin, false), (bot_id, true)]);
    // Refused: an unknown id, a role that is none.
    let out = role("usr_0EReR4WWfBto6iBJ0GJMqrlZ2Yd", "admin");
    assert!(String::from_utf8_lossy(&out.stderr).contains("no user or bot"));
    let out = role(bot_id, "owner");
    assert_eq!(out.status.code(), Some(2));

    // The server sees the roles: the former admin is a member now.
    let mut child = serve_command(&db).spawn().unwrap();
    let addr = listen_addr(&mut child);
    let auth = format!("Bearer {}", created["api_key"].as_str().unwrap());
    let (status, _, body) = http(addr, "GET", "/api/me", &api_headers(&auth), "");
    assert_eq!(status, 200, "{body}");
    let me: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(me["is_admin"], false, "{body}");
    let auth = format!("Bearer {}", bot["api_key"].as_str().unwrap());
    let (_, _, body) = http(addr, "GET", "/api/me", &api_headers(&auth), "");
    let me: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(me["is_admin"], true, "{body}");
    stop(child);
}

#[test]
fn first_start_prints_the_admin_key_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("tunnel.db").display());
    let console = dir.path().join("dist");
    std::fs::create_dir_all(&console).unwrap();
    std::fs::write(console.join("index.html"), "<html>console</html>").unwrap();
    let mut child = serve_command(&db)
        .arg("--console-dir")
        .arg(&console)
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
    let mut child = serve_command(&db).spawn().unwrap();
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

#[test]
fn metrics_are_served_on_their_own_listener_only() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("tunnel.db").display());
    let mut child = serve_command(&db)
        .args(["--metrics-listen", "127.0.0.1:0"])
        .spawn()
        .unwrap();
    let (addrs, _log) = listener_addrs(
        &mut child,
        &["tunnel-server listening", "metrics listening"],
    );
    let (api, metrics) = (addrs[0], addrs[1]);
    assert_ne!(api, metrics);

    let (status, head, body) = http(metrics, "GET", "/metrics", &[], "");
    assert_eq!(status, 200, "{body}");
    assert!(
        head.to_ascii_lowercase()
            .contains("content-type: application/openmetrics-text; version=1.0.0"),
        "{head}"
    );
    let value = |name: &str| -> i64 {
        body.lines()
            .find_map(|l| l.strip_prefix(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no {name} in:\n{body}"))
            .parse()
            .unwrap()
    };
    assert!(value("tunnel_runtime_tasks_alive") > 0);
    assert!(value("tunnel_runtime_workers") > 0);
    assert_eq!(value("tunnel_sessions_held"), 0);
    assert!(value("process_resident_memory_bytes") > 1_000_000);
    assert!(value("process_open_fds") > 2);
    assert!(body.contains("# TYPE tunnel_sessions_held gauge"), "{body}");
    // A SQLite file has one server: it keeps the rows it reads (none read yet).
    assert_eq!(value("tunnel_store_row_cache_on"), 1);
    assert_eq!(value("tunnel_store_rows_kept"), 0);
    // The start wrote (the default account, this node's membership); a commit holds writes.
    let commits = value("tunnel_store_commits_total");
    assert!(commits > 0, "{body}");
    assert!(value("tunnel_store_writes_total") >= commits, "{body}");
    assert!(
        body.contains("# TYPE tunnel_store_commits counter"),
        "{body}"
    );
    // Nothing else there, and not on the public listener.
    assert_eq!(http(metrics, "GET", "/api/credentials", &[], "").0, 404);
    let (_, _, public) = http(api, "GET", "/metrics", &[], "");
    assert!(!public.contains("tunnel_runtime_tasks_alive"), "{public}");
    stop(child);
}

/// A SQLite file is served by one process: a second `serve` on it is refused with a sentence
/// naming the file while the first runs (starting, it would have ended the first one's
/// sessions), and the first goes on serving; once the first stopped, the file can be served
/// again.
#[test]
fn a_second_server_on_the_same_sqlite_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tunnel.db");
    let db = format!("sqlite://{}", path.display());
    let mut first = serve_command(&db).spawn().unwrap();
    let addr = listen_addr(&mut first);

    let mut second = serve_command(&db).spawn().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let status = loop {
        if let Some(status) = second.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > deadline {
            stop(second);
            panic!("a second server on the same SQLite file kept running");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let mut stderr = String::new();
    second
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(!status.success());
    assert!(
        stderr.contains("is served by another tunnel-server process already")
            && stderr.contains(&path.display().to_string()),
        "{stderr}"
    );
    // The first one still answers.
    let (status, _, body) = http(
        addr,
        "GET",
        "/api/credentials",
        &[("Service-Version", "2")],
        "",
    );
    assert_eq!(status, 401, "{body}");
    stop(first);

    let mut again = serve_command(&db).spawn().unwrap();
    let _ = listen_addr(&mut again);
    stop(again);
}

/// An account's name is checked as a user's is (trimmed, at most 64 characters, no control
/// characters), and cannot be empty: the console's top bar shows it.
#[test]
fn account_names_are_checked_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("tunnel.db").display());
    let created = run_json(&[
        "account",
        "create",
        "--name",
        " Acme Corp ",
        "--database",
        &db,
    ]);
    let unnamed = run_json(&["account", "create", "--database", &db]);
    let listed = run_json(&["account", "list", "--database", &db]);
    assert_eq!(
        listed,
        json!([
            {"account_id": created["account_id"], "name": "Acme Corp"},
            {"account_id": unnamed["account_id"], "name": "default"},
        ])
    );
    let long = "n".repeat(65);
    for (name, says) in [
        ("", "an account's name cannot be empty"),
        ("   ", "an account's name cannot be empty"),
        (long.as_str(), "--name: name must be at most 64 characters"),
        ("Acme\nCorp", "control characters"),
    ] {
        let out = server_bin()
            .args(["account", "create", "--name", name, "--database", &db])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{name:?} was accepted");
        assert!(err.contains(says), "{name:?}: {err}");
    }
    // Nothing was created by the refused commands.
    assert_eq!(run_json(&["account", "list", "--database", &db]), listed);
}

/// `--help` shows which variable sets each option, never its value when it is a secret: a
/// PostgreSQL URL's password, the server key, the bootstrap API key, the cluster secret. Help
/// output ends up in scrollback, CI logs and support tickets.
#[test]
fn help_never_prints_a_secret_from_the_environment() {
    let server_key = "5e".repeat(32);
    let secrets = [
        (
            "TUNNEL_DATABASE",
            "postgres://tunnel:db-pass-4f1c@db.invalid/tunnel",
        ),
        ("TUNNEL_SERVER_KEY", server_key.as_str()),
        ("TUNNEL_BOOTSTRAP_API_KEY", "bootstrap-key-9d2e"),
        ("TUNNEL_CLUSTER_SECRET", "cluster-secret-7a3b"),
    ];
    let commands: [&[&str]; 7] = [
        &["serve", "--help"],
        &["account", "create", "--help"],
        &["account", "list", "--help"],
        &["user", "create", "--help"],
        &["user", "rename", "--help"],
        &["user", "list", "--help"],
        &["dev", "seed-credentials", "--help"],
    ];
    for args in commands {
        let mut cmd = server_bin();
        for (name, value) in secrets {
            cmd.env(name, value);
        }
        let out = cmd.args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {out:?}");
        let help = String::from_utf8_lossy(&out.stdout);
        assert!(
            help.contains("TUNNEL_DATABASE"),
            "{args:?} names its variable: {help}"
        );
        for (name, value) in secrets {
            assert!(
                !help.contains(value),
                "{args:?} printed {name}'s value: {help}"
            );
        }
        // The password alone, in case a URL were shown half-masked.
        assert!(!help.contains("db-pass-4f1c"), "{args:?}: {help}");
    }
}

/// `--api-listen`: the API alone at the root of an address of its own, where the official
/// clients expect it (docs/api/README.md). There `/credentials` is the API's, read and written
/// with the official clients' `Ngrok-Version` in place of `Service-Version`, under the API's
/// security policy; nothing else is served there (no `/api`, no console, no agent channel);
/// the main listener serves the same data under `/api`; an interrupt stops both listeners and
/// the process exits cleanly.
#[test]
fn the_api_alone_is_served_at_the_root_of_its_own_listener() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("tunnel.db").display());
    let key = "api-alone-test-key-0123456789";
    let mut child = serve_command(&db)
        .args(["--api-listen", "127.0.0.1:0"])
        .env("TUNNEL_BOOTSTRAP_API_KEY", key)
        .spawn()
        .unwrap();
    let (addrs, log) = listener_addrs(
        &mut child,
        &["tunnel-server listening", "the API alone listening"],
    );
    let (main, alone) = (addrs[0], addrs[1]);
    assert_ne!(main, alone);

    let auth = format!("Bearer {key}");
    let official = [("Authorization", auth.as_str()), ("Ngrok-Version", "2")];
    let created = http(
        alone,
        "POST",
        "/credentials",
        &[
            official[0],
            official[1],
            ("Content-Type", "application/json"),
        ],
        r#"{"description": "made at the root"}"#,
    );
    assert_eq!(created.0, 201, "{}", created.2);
    let (status, head, body) = http(alone, "GET", "/credentials", &official, "");
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("made at the root"), "{body}");
    assert!(
        head.to_ascii_lowercase()
            .contains("content-security-policy: default-src 'none'"),
        "{head}"
    );
    // The list parameters are checked by the same rules there (`/api_keys` is no `/api…`).
    assert_eq!(
        http(alone, "GET", "/api_keys?limit=1", &official, "").0,
        200
    );
    // The same data through the main listener, under /api.
    let (status, _, body) = http(
        main,
        "GET",
        "/api/credentials",
        &[("Authorization", auth.as_str()), ("Service-Version", "2")],
        "",
    );
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("made at the root"), "{body}");
    // Nothing but the API at the root listener.
    for path in ["/api/credentials", "/", "/agent/v1/connect", "/index.html"] {
        let (status, _, body) = http(alone, "GET", path, &official, "");
        assert_eq!(status, 404, "{path}: {body}");
        assert!(body.contains("ERR_TUNNEL_"), "{path}: {body}");
    }

    interrupt(&child);
    let exit = child.wait().unwrap();
    let log = log.join().unwrap();
    assert!(exit.success(), "{exit:?}\n{log}");
    assert!(std::net::TcpStream::connect(alone).is_err(), "{log}");
}

/// `kill -INT` of `child`.
fn interrupt(child: &std::process::Child) {
    let sent = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
}

/// A client that stops midway holds nothing for good: a request head never finished is closed
/// after 30 s (`serve::HEADER_READ`), a body never finished is answered 408 after 30 s
/// (`json::BODY_READ`), both while the server goes on answering others.
#[test]
fn a_client_that_stops_sending_midway_is_let_go() {
    use std::io::Write as _;
    use std::time::{Duration, Instant};
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("tunnel.db").display());
    let key = "stalled-clients-test-key-0123";
    let mut child = serve_command(&db)
        .env("TUNNEL_BOOTSTRAP_API_KEY", key)
        .spawn()
        .unwrap();
    let (addrs, log) = listener_addrs(&mut child, &["tunnel-server listening"]);
    let addr = addrs[0];
    let started = Instant::now();
    let mut head = std::net::TcpStream::connect(addr).unwrap();
    head.write_all(b"GET /api/credentials HTTP/1.1\r\nHost: x\r\n")
        .unwrap();
    let mut body = std::net::TcpStream::connect(addr).unwrap();
    write!(
        body,
        "POST /api/credentials HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\n\
         Service-Version: 2\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"de"
    )
    .unwrap();
    for stream in [&head, &body] {
        stream
            .set_read_timeout(Some(Duration::from_secs(60)))
            .unwrap();
    }
    // Others are served meanwhile.
    let (status, _, _) = http(
        addr,
        "GET",
        "/api/credentials",
        &[
            ("Authorization", &format!("Bearer {key}")),
            ("Service-Version", "2"),
        ],
        "",
    );
    assert_eq!(status, 200);
    let mut answer = String::new();
    let _ = body.read_to_string(&mut answer);
    let body_waited = started.elapsed();
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("ERR_TUNNEL_118"), "{answer}");
    let mut rest = Vec::new();
    let read = head.read_to_end(&mut rest);
    let head_waited = started.elapsed();
    assert!(
        read.is_ok() || head_waited < Duration::from_secs(59),
        "{read:?}"
    );
    for waited in [body_waited, head_waited] {
        assert!(
            waited >= Duration::from_secs(29) && waited < Duration::from_secs(50),
            "{waited:?}"
        );
    }
    interrupt(&child);
    assert!(child.wait().unwrap().success(), "{}", log.join().unwrap());
}

/// A stop is not held up by a client that stalled mid-request: the first interrupt waits for
/// it (what runs may finish), a second stops the server at once, cleanly.
#[test]
fn a_second_interrupt_stops_without_waiting_for_stalled_clients() {
    use std::io::Write as _;
    use std::time::{Duration, Instant};
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("tunnel.db").display());
    let mut child = serve_command(&db).spawn().unwrap();
    let (addrs, log) = listener_addrs(&mut child, &["tunnel-server listening"]);
    let mut stalled = std::net::TcpStream::connect(addrs[0]).unwrap();
    stalled
        .write_all(b"GET /api/credentials HTTP/1.1\r\nHost: x\r\n")
        .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    interrupt(&child);
    std::thread::sleep(Duration::from_secs(1));
    assert!(
        child.try_wait().unwrap().is_none(),
        "the first interrupt waits"
    );
    let second = Instant::now();
    interrupt(&child);
    let exit = child.wait().unwrap();
    let log = log.join().unwrap();
    assert!(exit.success(), "{exit:?}\n{log}");
    assert!(second.elapsed() < Duration::from_secs(10), "{log}");
    assert!(log.contains("stopping at once"), "{log}");
    drop(stalled);
}

/// The log holds no authtoken even at `RUST_LOG=trace`, where the WebSocket library would write
/// every message it receives (an agent's hello carries its authtoken): the server caps that
/// library's logging below trace whatever `RUST_LOG` says.
#[test]
fn the_log_holds_no_authtoken_even_at_trace_level() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("tunnel.db").display());
    let mut child = serve_command(&db).env("RUST_LOG", "trace").spawn().unwrap();
    let (addrs, rest) = listener_addrs(&mut child, &["tunnel-server listening"]);

    // An agent's hello, as a client's masked text frame after the handshake.
    let token = "0ERtraceLevelAuthtokenNeverLogged42";
    let (mut stream, head) = agent_handshake(addrs[0]);
    assert!(head.starts_with("HTTP/1.1 101"), "{head}");
    let hello = json!({"type": "hello", "authtoken": token, "version": "3.4.0", "os": "linux"});
    send_text_frame(&mut stream, &hello.to_string());
    // The server answers (an unknown authtoken) and closes.
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);

    stop(child);
    let log = rest.join().unwrap();
    assert!(log.contains("DEBUG"), "verbose logging was on:\n{log}");
    assert!(!log.contains(token), "{log}");
}

/// What a client sends cannot write lines of its own into the log: a hello refused for a bind
/// holding a line break and terminal control bytes (checked before any authtoken, so anyone can
/// send one) is logged on one line, those characters escaped.
#[test]
fn a_client_cannot_forge_log_lines() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("tunnel.db").display());
    let mut child = serve_command(&db).spawn().unwrap();
    let (addrs, rest) = listener_addrs(&mut child, &["tunnel-server listening"]);

    let forged = "2026-01-01T00:00:00.000000Z  WARN tunnel_server::cli: FORGED";
    let bind = format!("x\n{forged}\u{1b}[31m\r\u{7}");
    let (mut stream, head) = agent_handshake(addrs[0]);
    assert!(head.starts_with("HTTP/1.1 101"), "{head}");
    let hello = json!({"type": "hello", "authtoken": "nope", "agent_version": "3.4.0",
        "os": "linux", "metadata": "", "update_checks": true, "binds": [bind]});
    send_text_frame(&mut stream, &hello.to_string());
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);

    stop(child);
    let log = rest.join().unwrap();
    let refused: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("agent refused"))
        .collect();
    assert_eq!(refused.len(), 1, "{log}");
    assert!(
        refused[0].contains("FORGED"),
        "the bind is in the message: {log}"
    );
    assert!(
        refused[0].contains("ip=127.0.0.1"),
        "who was refused: {log}"
    );
    assert!(
        !log.lines()
            .any(|l| l.starts_with(forged) || l.starts_with("FORGED")),
        "{log}"
    );
    assert!(!log.contains(['\u{1b}', '\r', '\u{7}']), "{log:?}");
}

/// A PostgreSQL server that cannot be reached: the command says why (the connection was
/// refused), not only that a pool timed out, and never shows the URL's password.
#[test]
fn an_unreachable_postgres_is_said_as_such() {
    // A loopback port nothing listens on: bound, then let go.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("postgres://tunnel:pw-unreachable-7@127.0.0.1:{port}/tunnel");
    let out = server_bin()
        .args(["account", "list", "--database", &url])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("cannot connect to the database"), "{said}");
    assert!(said.to_lowercase().contains("refused"), "{said}");
    assert!(!said.contains("pw-unreachable-7"), "{said}");
}

/// An answer that cannot be written (stdout on a full disk) is an error said on stderr, exit
/// status 1, not a panic; what the command made is kept and says how to get another key.
#[test]
fn an_unwritable_stdout_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("a.db").display());
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = server_bin()
        .args(["account", "create", "--database", &url])
        .stdout(full)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("cannot write the answer to stdout"), "{said}");
    assert!(!said.contains("panicked"), "{said}");
}

/// A database a newer build migrated (its schema past this build's last migration) is refused
/// by `serve` and by the operator commands, before anything is written; `migrate` says who can
/// move it, and that an empty database holds nothing to move.
#[test]
fn a_database_from_a_newer_build_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.db");
    let url = format!("sqlite://{}", file.display());
    run_json(&["account", "create", "--database", &url]);
    let newer = {
        let db = rusqlite::Connection::open(&file).unwrap();
        db.execute(
            "INSERT INTO schema_migrations (version, applied_at) \
             SELECT MAX(version) + 1, '2030-01-01T00:00:00Z' FROM schema_migrations",
            [],
        )
        .unwrap();
        db.query_row("SELECT MAX(version) FROM schema_migrations", [], |r| {
            r.get::<_, i64>(0)
        })
        .unwrap()
    };
    for args in [
        vec!["account", "list", "--database", &url],
        vec!["serve", "--listen", "127.0.0.1:0", "--database", &url],
    ] {
        let out = server_bin().args(&args).output().unwrap();
        let said = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {said}");
        assert!(
            said.contains(&format!("schema version {newer}, newer than this build's")),
            "{args:?}: {said}"
        );
    }
    let to = format!("sqlite://{}", dir.path().join("b.db").display());
    let out = server_bin()
        .args(["migrate", "--from", &url, "--to", &to])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("the tunnel-server that migrated it"),
        "{said}"
    );
    std::fs::write(dir.path().join("empty.db"), "").unwrap();
    let empty = format!("sqlite://{}", dir.path().join("empty.db").display());
    let out = server_bin()
        .args(["migrate", "--from", &empty, "--to", &to])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("holds no installation"), "{said}");
}

/// `migrate`'s `next` names the source's key file only when there is one: a source served with
/// `--server-key` (or never served) has none, and `$(cat …)` of a missing file is an empty key.
#[test]
fn migrate_names_the_key_file_only_where_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let url = |name: &str| format!("sqlite://{}", dir.path().join(name).display());
    run_json(&["account", "create", "--database", &url("a.db")]);
    let moved = run_json(&["migrate", "--from", &url("a.db"), "--to", &url("b.db")]);
    let next = moved["next"].as_str().unwrap();
    assert!(!next.contains("server.key"), "{next}");
    assert!(next.contains("TUNNEL_SERVER_KEY"), "{next}");
    std::fs::write(dir.path().join("server.key"), "ab".repeat(32)).unwrap();
    let moved = run_json(&["migrate", "--from", &url("a.db"), "--to", &url("c.db")]);
    let next = moved["next"].as_str().unwrap();
    assert!(
        next.contains("$(cat ") && next.contains("server.key"),
        "{next}"
    );
}

/// A blank server key (an empty `TUNNEL_SERVER_KEY`) is no key: a database sealed with a given
/// key, served again with a blank one, is refused without a key file written beside it (taken
/// as given, a blank key once sealed with a random one nobody had).
#[test]
fn a_blank_server_key_is_no_key() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("tunnel.db").display());
    let mut child = serve_command(&db)
        .env("TUNNEL_SERVER_KEY", "4d".repeat(32))
        .spawn()
        .unwrap();
    listen_addr(&mut child);
    stop(child);
    let out = serve_command(&db)
        .env("TUNNEL_SERVER_KEY", "   ")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("sealed with a server key that is not here"),
        "{said}"
    );
    assert!(!dir.path().join("server.key").exists());
}

/// `--bootstrap-api-key` makes sure an admin holds the key: its holder made a member (`user
/// role`) is an admin again at the next start.
#[test]
fn the_bootstrap_key_stays_an_admins() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("tunnel.db").display());
    let key = "bootstrap-held-by-an-admin-0123";
    let start = || {
        let mut child = serve_command(&db)
            .env("TUNNEL_BOOTSTRAP_API_KEY", key)
            .spawn()
            .unwrap();
        let addr = listen_addr(&mut child);
        (child, addr)
    };
    let me = |addr| {
        let auth = format!("Bearer {key}");
        let (status, _, body) = http(addr, "GET", "/api/me", &api_headers(&auth), "");
        assert_eq!(status, 200, "{body}");
        serde_json::from_str::<Value>(&body).unwrap()
    };
    let (child, addr) = start();
    let holder = me(addr);
    stop(child);
    let account = holder["account_id"].as_str().unwrap();
    run_json(&[
        "user",
        "create",
        "--account",
        account,
        "--admin",
        "--database",
        &db,
    ]);
    let holder_id = holder["principal_id"].as_str().unwrap();
    run_json(&[
        "user",
        "role",
        "--id",
        holder_id,
        "--role",
        "member",
        "--database",
        &db,
    ]);
    let (child, addr) = start();
    assert_eq!(me(addr)["is_admin"], true);
    stop(child);
}

/// `user remove`: someone who left. A user owning a credential is kept until someone takes it
/// over (`--to`); then the user and their API keys go, the credential (which agents may be
/// using) changes hands, and a running server refuses the key within its key cache's 10 s and
/// shows the new owner; the last admin, an unknown heir and the user as their own heir are
/// refused.
#[test]
fn a_user_who_left_is_removed_and_their_credentials_handed_over() {
    use std::time::{Duration, Instant};
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("tunnel.db").display());
    let admin_key = "user-remove-admin-key-0123456";
    let mut child = serve_command(&db)
        .env("TUNNEL_BOOTSTRAP_API_KEY", admin_key)
        .spawn()
        .unwrap();
    let addr = listen_addr(&mut child);
    let call = |key: &str, method: &str, path: &str, body: &str| {
        let auth = format!("Bearer {key}");
        let (status, _, body) = http(addr, method, path, &api_headers(&auth), body);
        (
            status,
            serde_json::from_str::<Value>(&body).unwrap_or(Value::Null),
        )
    };
    let (_, me) = call(admin_key, "GET", "/api/me", "");
    let (account, admin) = (
        me["account_id"].as_str().unwrap().to_owned(),
        me["principal_id"].as_str().unwrap().to_owned(),
    );
    let leaver = run_json(&[
        "user",
        "create",
        "--account",
        &account,
        "--name",
        "Leaver",
        "--database",
        &db,
    ]);
    let (leaver_id, leaver_key) = (
        leaver["user_id"].as_str().unwrap().to_owned(),
        leaver["api_key"].as_str().unwrap().to_owned(),
    );
    let (status, credential) = call(&leaver_key, "POST", "/api/credentials", "{}");
    assert_eq!(status, 201, "{credential}");
    let credential_path = format!("/api/credentials/{}", credential["id"].as_str().unwrap());
    // Read once by the server, so that its row cache holds the credential.
    assert_eq!(
        call(admin_key, "GET", &credential_path, "").1["owner_id"],
        leaver_id.as_str()
    );

    let remove = |extra: &[&str]| {
        let mut args = vec![
            "user",
            "remove",
            "--id",
            leaver_id.as_str(),
            "--database",
            &db,
        ];
        args.extend(extra);
        server_bin().args(&args).output().unwrap()
    };
    for (extra, said) in [
        (&[][..], "owns 1 credential(s)"),
        (
            &["--to", "usr_0000000000000000000000000000"][..],
            "is not another user or bot",
        ),
        (
            &["--to", leaver_id.as_str()][..],
            "is not another user or bot",
        ),
    ] {
        let out = remove(extra);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{extra:?}: {stderr}");
        assert!(stderr.contains(said), "{extra:?}: {stderr}");
    }
    let out = server_bin()
        .args(["user", "remove", "--id", &admin, "--database", &db])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("last admin"));

    let removed = run_json(&[
        "user",
        "remove",
        "--id",
        &leaver_id,
        "--to",
        &admin,
        "--database",
        &db,
    ]);
    assert_eq!(removed["api_keys_deleted"], 1);
    assert_eq!(removed["credentials_moved"], 1);
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let refused = call(&leaver_key, "GET", "/api/me", "").0 == 401;
        let handed = call(admin_key, "GET", &credential_path, "").1["owner_id"] == admin.as_str();
        if refused && handed {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "refused {refused}, handed over {handed}"
        );
        std::thread::sleep(Duration::from_millis(250));
    }
    let (_, users) = call(admin_key, "GET", "/api/users", "");
    assert!(!users.to_string().contains(&leaver_id), "{users}");
    stop(child);
}
