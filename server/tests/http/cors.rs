//! CORS: origins checked and normalised before anything starts (a wildcard stops `serve`
//! before it touches the database), and only the configured origins allowed.

use crate::common::TestApp;
use crate::common::process::server_bin;
use tunnel_server::config::Config;

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

#[tokio::test]
async fn cors_allows_configured_origins_only() {
    let mut config = tunnel_server::config::Config::in_memory();
    config.cors_origins = vec!["https://console.example".into()];
    let app = TestApp::with_config(config).await;
    let r = app
        .call(axum::http::Method::OPTIONS, "/credentials")
        .header("origin", "https://console.example")
        .header("access-control-request-method", "POST")
        .header(
            "access-control-request-headers",
            "authorization, content-type, service-version",
        )
        .send(&app)
        .await;
    assert!(r.status < 300, "{}", r.status);
    assert_eq!(
        r.headers.get("access-control-allow-origin").unwrap(),
        "https://console.example"
    );
    let allowed = r
        .headers
        .get("access-control-allow-headers")
        .unwrap()
        .to_str()
        .unwrap()
        .to_ascii_lowercase();
    assert!(
        allowed.contains("service-version") && allowed.contains("authorization"),
        "{allowed}"
    );
    let r = app
        .get("/credentials")
        .header("origin", "https://console.example")
        .send(&app)
        .await;
    assert_eq!(
        r.headers.get("access-control-allow-origin").unwrap(),
        "https://console.example"
    );
    assert!(
        r.headers
            .get("access-control-expose-headers")
            .unwrap()
            .to_str()
            .unwrap()
            .contains("operation-id")
    );
    let r = app
        .get("/credentials")
        .header("origin", "https://evil.example")
        .send(&app)
        .await;
    assert!(r.headers.get("access-control-allow-origin").is_none());
}
