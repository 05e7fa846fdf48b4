//! Regression tests of the HTTP side's hardening: CORS origins checked before anything starts,
//! JSON errors for undecodable path ids, the body `id` of the TLS edge backend PUT, the limit on
//! concurrent key generations, references re-checked inside the write transaction, security
//! headers (the console's CSP by path, 304s included), the console's 404 for missing files,
//! gzip of the API's JSON (never of the agent channel), and the default console directory.

mod common;

use axum::response::IntoResponse as _;
use common::TestApp;
use http_body_util::BodyExt as _;
use serde_json::{Value, json};
use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{SocketAddr, TcpStream};
use std::process::{Command, Stdio};
use std::time::Duration;
use tunnel_core::ids::{IdKind, make_id};
use tunnel_server::config::Config;
use tunnel_server::error::ApiError;
use tunnel_server::keys::KeyGenLimiter;
use tunnel_server::store::ReferenceError;

fn server_bin() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tunnel-server"));
    cmd.env("NO_COLOR", "1")
        .env("RUST_LOG", "info")
        .env_remove("TUNNEL_BOOTSTRAP_API_KEY")
        .env_remove("TUNNEL_DATABASE")
        .env_remove("TUNNEL_CORS_ORIGIN")
        .env_remove("TUNNEL_CONSOLE_DIR");
    cmd
}

// --- 1. CORS origins -----------------------------------------------------------------------

#[test]
fn cors_origins_are_checked_and_normalised() {
    let parse = |v: &[&str]| {
        Config::parse_cors_origins(&v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>())
    };
    assert_eq!(
        parse(&[
            "HTTPS://Console.Example.com:443/",
            "http://127.0.0.1:8081",
            ""
        ])
        .unwrap(),
        vec!["https://console.example.com", "http://127.0.0.1:8081"]
    );
    let wildcard = parse(&["*"]).unwrap_err().to_string();
    assert!(wildcard.contains("--cors-origin `*`"), "{wildcard}");
    assert!(wildcard.contains("wildcard"), "{wildcard}");
    for bad in [
        "https://c.example/console",
        "https://c.example?x=1",
        "ftp://c.example",
        "c.example",
        "https://user@c.example",
        "null",
    ] {
        let e = parse(&[bad]).expect_err(bad).to_string();
        assert!(e.contains(bad), "{e}");
    }
}

#[test]
fn a_wildcard_cors_origin_stops_serve_before_it_touches_the_database() {
    let dir = tempfile::tempdir().unwrap();
    let db_path = dir.path().join("data/tunnel.db");
    let db = format!("sqlite://{}", db_path.display());
    for origin in ["*", "https://c.example/path"] {
        let out = server_bin()
            .args(["serve", "--listen", "127.0.0.1:0", "--database", &db])
            .args(["--cors-origin", origin])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(!out.status.success(), "{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
        assert!(stderr.contains("--cors-origin"), "{stderr}");
        assert!(!stdout.contains("API key"), "{stdout}");
        assert!(!db_path.exists(), "the database was created");
        assert!(
            !dir.path().join("data").exists(),
            "the data directory was created"
        );
    }
}

#[tokio::test]
async fn a_wildcard_in_a_config_built_in_code_does_not_panic() {
    let mut config = Config::in_memory();
    config.cors_origins = vec!["*".into(), "https://c.example".into()];
    let app = TestApp::with_config(config).await;
    let r = app
        .call(axum::http::Method::OPTIONS, "/credentials")
        .header("origin", "https://c.example")
        .header("access-control-request-method", "GET")
        .send(&app)
        .await;
    assert_eq!(
        r.headers
            .get("access-control-allow-origin")
            .and_then(|v| v.to_str().ok()),
        Some("https://c.example")
    );
}

// --- 2. Path ids that do not decode ---------------------------------------------------------

#[tokio::test]
async fn undecodable_path_ids_get_the_json_error_body() {
    let app = TestApp::new().await;
    for path in [
        "/credentials/%FF",
        "/ssh_certificate_authorities/%FF",
        "/tunnel_sessions/%FF",
        "/edges/tls/%FF",
        "/edges/tls/%FF/backend",
        "/backends/tunnel_group/%FF",
        "/event_destinations/%FF",
        "/event_subscriptions/%FF",
        "/event_subscriptions/%FF/sources/x",
    ] {
        let r = app.get(path).send(&app).await;
        r.error(400, "ERR_TUNNEL_114");
        assert_eq!(r.field(), "id", "{path}: {}", r.text);
        assert!(
            r.headers
                .get("content-type")
                .is_some_and(|v| v.to_str().unwrap().starts_with("application/json")),
            "{path}"
        );
    }
    let sub = make_id(IdKind::EventSubscription, 1, [1; 14]);
    let r = app
        .get(&format!("/event_subscriptions/{sub}/sources/%FF"))
        .send(&app)
        .await;
    r.error(400, "ERR_TUNNEL_114");
    assert_eq!(r.field(), "event_type");
    let r = app.delete("/credentials/%FF").send(&app).await;
    r.error(400, "ERR_TUNNEL_114");
}

// --- 3. The body id of PUT /edges/tls/{id}/backend -------------------------------------------

#[tokio::test]
async fn tls_edge_backend_put_accepts_its_own_id_and_refuses_another() {
    let app = TestApp::new().await;
    let backend = app.create("/backends/tunnel_group", json!({})).await;
    let edge = app
        .create("/edges/tls", json!({"hostports": ["app.example.com:443"]}))
        .await;
    let (bid, eid) = (
        backend["id"].clone(),
        edge["id"].as_str().unwrap().to_owned(),
    );
    let path = format!("/edges/tls/{eid}/backend");
    let r = app
        .put(&path, json!({"id": eid, "backend_id": bid}))
        .send(&app)
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.json["backend"]["id"], bid);
    let other = make_id(IdKind::TlsEdge, 1, [1; 14]);
    let r = app
        .put(&path, json!({"id": other, "backend_id": bid}))
        .send(&app)
        .await;
    r.error(400, "ERR_TUNNEL_114");
    assert_eq!(r.field(), "id");
}

// --- 4. Concurrent key generations ----------------------------------------------------------

#[tokio::test]
async fn key_generation_answers_503_when_no_permit_frees_up_in_time() {
    let base = TestApp::new().await;
    let mut state = base.state.clone();
    state.keygen = KeyGenLimiter::new(1, Duration::from_millis(100));
    let app = TestApp {
        router: tunnel_server::app(state.clone()),
        state,
        ..base
    };
    let held = app.state.keygen.acquire().await.unwrap();
    let r = app
        .post(
            "/ssh_certificate_authorities",
            json!({"private_key_type": "ed25519"}),
        )
        .send(&app)
        .await;
    r.error(503, "ERR_TUNNEL_160");
    drop(held);
    app.create(
        "/ssh_certificate_authorities",
        json!({"private_key_type": "ed25519"}),
    )
    .await;
}

// --- 5. References checked inside the write transaction ------------------------------------

/// The wire form of an error, as a handler would answer it.
async fn wire(error: impl Into<ApiError>) -> (u16, Value) {
    let response = error.into().into_response();
    let status = response.status().as_u16();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (status, serde_json::from_slice(&bytes).unwrap())
}

#[tokio::test]
async fn a_destination_deleted_after_the_check_is_a_400_not_a_500() {
    let app = TestApp::new().await;
    let store = &app.state.store;
    // The handler's check passed, then the destination went away: the store's own check, in
    // its write transaction, must still catch it (the foreign key alone made it a 500).
    let gone = make_id(IdKind::EventDestination, 1, [1; 14]);
    let ed = app
        .create(
            "/event_destinations",
            json!({"target": {"webhook": {"url": "https://e.example/h"}}}),
        )
        .await;
    let kept = ed["id"].as_str().unwrap().to_owned();
    let err = store
        .create_subscription(&app.account_id, "", "", &[], &[kept.clone(), gone.clone()])
        .await
        .expect_err("missing destination");
    assert!(
        matches!(&err, ReferenceError::Missing { field, .. } if field == "destination_ids[1]"),
        "{err:?}"
    );
    let (status, body) = wire(err).await;
    assert_eq!(status, 400);
    assert_eq!(body["error_code"], "ERR_TUNNEL_121");
    assert_eq!(body["details"]["field"], "destination_ids[1]");
    // Nothing half-written: no subscription was created.
    let list = app.get("/event_subscriptions").send(&app).await;
    assert_eq!(list.json["event_subscriptions"], json!([]));

    let sub = store
        .create_subscription(&app.account_id, "", "", &[], std::slice::from_ref(&kept))
        .await
        .unwrap();
    let err = store
        .update_subscription(
            &app.account_id,
            &sub.id,
            tunnel_server::store::SubscriptionChanges {
                description: Some("changed".into()),
                metadata: None,
                sources: None,
                destination_ids: Some(vec![gone.clone()]),
            },
        )
        .await
        .expect_err("missing destination");
    let (status, body) = wire(err).await;
    assert_eq!(
        (status, body["details"]["field"].clone()),
        (400, json!("destination_ids[0]"))
    );
    // Rolled back: the old destinations and description stay.
    let read = app
        .get(&format!("/event_subscriptions/{}", sub.id))
        .send(&app)
        .await;
    assert_eq!(read.json["destinations"][0]["id"], kept);
    assert_eq!(read.json["description"], "");
    // Another account's destination is not a reference either.
    let err = store
        .create_subscription(&app.other_account_id, "", "", &[], &[kept])
        .await
        .expect_err("another account's destination");
    assert_eq!(wire(err).await.0, 400);
}

#[tokio::test]
async fn a_backend_deleted_after_the_check_is_a_400_not_a_500() {
    let app = TestApp::new().await;
    let edge = app
        .create("/edges/tls", json!({"hostports": ["app.example.com:443"]}))
        .await;
    let eid = edge["id"].as_str().unwrap();
    let gone = make_id(IdKind::TunnelGroupBackend, 1, [1; 14]);
    let err = app
        .state
        .store
        .set_tls_edge_backend(&app.account_id, eid, Some((&gone, true)))
        .await
        .expect_err("missing backend");
    let (status, body) = wire(err).await;
    assert_eq!(status, 400);
    assert_eq!(body["error_code"], "ERR_TUNNEL_121");
    assert_eq!(body["details"]["field"], "backend_id");
    // A backend of another account passes the foreign key, but is no reference of this one.
    let ours = app.create("/backends/tunnel_group", json!({})).await;
    let their_edge = app
        .post("/edges/tls", json!({"hostports": ["b.example.com:443"]}))
        .key(&app.other_key)
        .send(&app)
        .await;
    assert_eq!(their_edge.status, 201, "{}", their_edge.text);
    let r = app
        .put(
            &format!(
                "/edges/tls/{}/backend",
                their_edge.json["id"].as_str().unwrap()
            ),
            json!({"backend_id": ours["id"]}),
        )
        .key(&app.other_key)
        .send(&app)
        .await;
    r.error(400, "ERR_TUNNEL_121");
    assert_eq!(r.field(), "backend_id");
}

// --- 7. Security headers, console serving, compression --------------------------------------

fn header<'a>(r: &'a common::Resp, name: &str) -> &'a str {
    r.headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
}

fn assert_common_headers(r: &common::Resp) {
    assert_eq!(header(r, "x-content-type-options"), "nosniff");
    assert_eq!(header(r, "referrer-policy"), "no-referrer");
    assert_eq!(header(r, "x-frame-options"), "DENY");
    assert!(
        header(r, "content-security-policy").contains("frame-ancestors 'none'"),
        "{:?}",
        r.headers
    );
}

/// The inline bootstrap script of the test console, as trunk writes one.
const INLINE_SCRIPT: &str = "\nimport init from '/app.js';\nawait init();\n";
/// Its CSP hash source, computed outside the server (in Python:
/// `base64.b64encode(hashlib.sha256(INLINE_SCRIPT.encode()).digest())`).
const INLINE_SCRIPT_HASH: &str = "'sha256-mStLiw5ufhC4Rn65S+yuobFT1L6YIq0IsINW02YqTpc='";

/// An app serving a console directory shaped like trunk's output: `index.html` with an inline
/// module script, and the JS file it loads. The directory lives as long as the returned guard.
async fn console_app() -> (tempfile::TempDir, TestApp, String) {
    let dir = tempfile::tempdir().unwrap();
    let index = format!(
        "<html><head><script type=\"module\">{INLINE_SCRIPT}</script>\
         <link rel=\"modulepreload\" href=\"/app.js\"></head></html>"
    );
    std::fs::write(dir.path().join("index.html"), &index).unwrap();
    std::fs::write(
        dir.path().join("app.js"),
        "export default function init() {}",
    )
    .unwrap();
    let mut config = Config::in_memory();
    config.console_dir = Some(dir.path().to_owned());
    (dir, TestApp::with_config(config).await, index)
}

/// Asserts the console's CSP: the app may run (its WASM too), its inline bootstrap by hash.
fn assert_console_csp(r: &common::Resp, what: &str) {
    assert_common_headers(r);
    let csp = header(r, "content-security-policy");
    assert!(
        csp.starts_with("default-src 'none'; script-src 'self' 'wasm-unsafe-eval' "),
        "{what}: {csp}"
    );
    assert!(csp.contains(INLINE_SCRIPT_HASH), "{what}: {csp}");
    assert!(csp.contains("style-src 'self'"), "{what}: {csp}");
    assert!(
        csp.contains("connect-src 'self' http: https:"),
        "{what}: {csp}"
    );
    assert!(!csp.contains("unsafe-inline"), "{what}: {csp}");
}

#[tokio::test]
async fn every_response_has_the_security_headers() {
    let (dir, app, _) = console_app().await;

    // The API, success and errors alike, and the agent channel: nothing to load.
    for r in [
        app.get("/credentials").send(&app).await,
        app.get("/credentials/%FF").send(&app).await,
        app.get("/nowhere").send(&app).await,
        app.get("/openapi.json").send(&app).await,
        app.get("/api").outside_api().send(&app).await,
        app.get("/api/").outside_api().send(&app).await,
        app.get("/agent/v1/connect").outside_api().send(&app).await,
    ] {
        assert_common_headers(&r);
        assert_eq!(
            header(&r, "content-security-policy"),
            tunnel_server::security::API_CSP
        );
    }

    // The console: its page (also at client routes, whatever their first letters) and its files.
    for path in ["/", "/credentials/cr_x", "/apiary", "/app.js"] {
        let r = app.get(path).outside_api().send(&app).await;
        assert_eq!(r.status, 200, "{path}");
        assert_console_csp(&r, path);
    }

    // A rebuilt console (new inline script) gets the new hash without a restart.
    let before = header(
        &app.get("/").outside_api().send(&app).await,
        "content-security-policy",
    )
    .to_owned();
    std::thread::sleep(Duration::from_millis(20));
    let rebuilt =
        "<html><head><script type=\"module\">await import('/other.js');</script></head></html>";
    std::fs::write(dir.path().join("index.html"), rebuilt).unwrap();
    let after = app.get("/").outside_api().send(&app).await;
    let after_csp = header(&after, "content-security-policy");
    assert_ne!(before, after_csp);
    assert_eq!(after_csp, tunnel_server::security::console_csp(rebuilt));
}

#[tokio::test]
async fn a_revalidated_console_response_keeps_the_console_csp() {
    // A reload revalidates what the browser cached. The 304 has no content type, and the
    // browser applies its CSP to the cached page: the API's policy there blocks the stylesheet,
    // the scripts and the WASM (a blank console). Pages, client routes and files alike.
    let (_dir, app, _) = console_app().await;
    for path in ["/", "/credentials", "/credentials/cr_x", "/app.js"] {
        let first = app.get(path).outside_api().send(&app).await;
        assert_eq!(first.status, 200, "{path}");
        assert_console_csp(&first, path);
        let last_modified = header(&first, "last-modified");
        assert!(!last_modified.is_empty(), "{path} has no Last-Modified");
        let mut revalidations = vec![("if-modified-since", last_modified)];
        // tower-http sends no ETag today; should it start to, `If-None-Match` is checked too.
        if let Some(etag) = first.headers.get("etag").and_then(|v| v.to_str().ok()) {
            revalidations.push(("if-none-match", etag));
        }
        for (name, value) in revalidations {
            let again = app
                .get(path)
                .outside_api()
                .header(name, value)
                .send(&app)
                .await;
            assert_eq!(again.status, 304, "{path} with {name}");
            assert!(again.bytes.is_empty(), "{path} with {name}");
            assert_console_csp(&again, path);
            assert_eq!(
                header(&again, "content-security-policy"),
                header(&first, "content-security-policy"),
                "{path} with {name}"
            );
        }
    }
}

#[tokio::test]
async fn a_missing_file_is_a_404_and_an_extensionless_path_is_a_client_route() {
    let (_dir, app, index) = console_app().await;
    // A path whose last segment has an extension names a file: when there is none, a short
    // text 404 (never the console's page, which would answer robots.txt with HTML).
    for path in [
        "/robots.txt",
        "/favicon.ico",
        "/foo.js",
        "/x/y.png",
        "/assets/missing.js",
        "/credentials/x.png",
    ] {
        let r = app.get(path).outside_api().send(&app).await;
        assert_eq!(r.status, 404, "{path}: {}", r.text);
        assert!(
            header(&r, "content-type").starts_with("text/plain"),
            "{path}: {:?}",
            r.headers
        );
        assert!(
            r.text.len() < 100 && !r.text.contains('<'),
            "{path}: {}",
            r.text
        );
        assert_console_csp(&r, path);
    }
    // Ids and route names have no dots: such paths are the console's client routes.
    for path in [
        "/credentials/cr_abc",
        "/tunnel_sessions",
        "/tunnel_sessions/ts_1",
        "/credentials/",
    ] {
        let r = app.get(path).outside_api().send(&app).await;
        assert_eq!(r.status, 200, "{path}");
        assert_eq!(r.text, index, "{path}");
        assert!(
            header(&r, "content-type").starts_with("text/html"),
            "{path}"
        );
        assert_console_csp(&r, path);
    }
}

#[tokio::test]
async fn the_csp_allows_the_inline_script_of_the_built_console() {
    // The real `trunk build` output, when present in the checkout: its one inline script is
    // what the hash must cover (the e2e tests check that Chromium runs the app under it).
    let index = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../dist/index.html");
    let Ok(html) = std::fs::read_to_string(&index) else {
        return;
    };
    let csp = tunnel_server::security::console_csp(&html);
    assert_eq!(
        csp.matches("'sha256-").count(),
        html.matches("<script type=\"module\">").count(),
        "{csp}"
    );
}

/// The body as JSON, gunzipped first when the response says it is gzip.
fn decoded_json(r: &common::Resp) -> Value {
    if header(r, "content-encoding") != "gzip" {
        return serde_json::from_slice(&r.bytes).unwrap();
    }
    let mut decoded = Vec::new();
    flate2::read::GzDecoder::new(r.bytes.as_slice())
        .read_to_end(&mut decoded)
        .unwrap();
    serde_json::from_slice(&decoded).unwrap()
}

#[tokio::test]
async fn api_json_is_compressed_for_clients_that_accept_it() {
    let app = TestApp::new().await;
    for i in 0..30 {
        let description = format!("a credential with a long, compressible description, no. {i}");
        app.create("/credentials", json!({ "description": description }))
            .await;
    }
    let plain = app.get("/credentials").send(&app).await;
    assert_eq!(plain.status, 200);
    assert!(plain.headers.get("content-encoding").is_none());
    assert_eq!(plain.json["credentials"].as_array().unwrap().len(), 30);
    let gz = app
        .get("/credentials")
        .header("accept-encoding", "gzip")
        .send(&app)
        .await;
    assert_eq!(gz.status, 200);
    assert_eq!(header(&gz, "content-encoding"), "gzip");
    assert!(header(&gz, "vary").contains("accept-encoding"));
    assert!(gz.headers.contains_key("operation-id"));
    assert!(gz.bytes.len() * 3 < plain.bytes.len(), "barely compressed");
    assert_eq!(decoded_json(&gz), plain.json);
    // Errors keep their operation id, in the header and in the (compressed or not) body.
    for path in ["/credentials/cr_missing", "/nowhere"] {
        let err = app
            .get(path)
            .header("accept-encoding", "gzip")
            .send(&app)
            .await;
        assert_eq!(err.status, 404, "{path}");
        let body = decoded_json(&err);
        assert!(
            body["details"]["operation_id"]
                .as_str()
                .is_some_and(|op| op.starts_with("op_") && op == header(&err, "operation-id")),
            "{path}: {body} {:?}",
            err.headers
        );
    }
}

#[tokio::test]
async fn the_agent_channel_is_never_compressed() {
    // An upgrade request for the agent WebSocket from a client that accepts gzip. In-process
    // there is no connection to upgrade, so axum answers a text rejection long enough for the
    // compression layer's predicate: had the channel been wrapped, it would come back gzipped.
    let (_dir, app, _) = console_app().await;
    let r = app
        .get("/agent/v1/connect")
        .outside_api()
        .header("connection", "upgrade")
        .header("upgrade", "websocket")
        .header("sec-websocket-version", "13")
        .header("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ==")
        .header("accept-encoding", "gzip")
        .send(&app)
        .await;
    assert!(
        r.status >= 400 && r.status < 500,
        "{}: {}",
        r.status,
        r.text
    );
    assert!(r.bytes.len() >= 32, "{}", r.text);
    assert!(
        r.headers.get("content-encoding").is_none(),
        "{:?}",
        r.headers
    );
    assert!(
        !header(&r, "vary").contains("accept-encoding"),
        "{:?}",
        r.headers
    );
}

// --- 8. The default console directory -------------------------------------------------------

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
            std::thread::spawn(move || std::io::copy(&mut reader, &mut std::io::sink()));
            return addr;
        }
    }
}

#[test]
fn serve_serves_the_console_from_dist_by_default() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("dist")).unwrap();
    std::fs::write(
        dir.path().join("dist/index.html"),
        "<html>default dist</html>",
    )
    .unwrap();
    let db = format!("sqlite://{}", dir.path().join("tunnel.db").display());
    let mut child = server_bin()
        .current_dir(dir.path())
        .args(["serve", "--listen", "127.0.0.1:0", "--database", &db])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let addr = listen_addr(&mut child);
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    stream
        .write_all(
            format!("GET /some/deep/link HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n")
                .as_bytes(),
        )
        .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    child.kill().unwrap();
    let _ = child.wait();
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(
        response.ends_with("<html>default dist</html>"),
        "{response}"
    );
    let lower = response.to_ascii_lowercase();
    assert!(
        lower.contains("content-security-policy: default-src 'none'; script-src"),
        "{response}"
    );
}
