//! Serving the console (`docs/console.md`): its files, the index for client routes (paths
//! without an extension), a plain 404 for missing files, the build's brotli and gzip files
//! (gzip on the fly without them), `Cache-Control` by name, and
//! `dist/` as the default directory of `serve`.

use crate::common::TestApp;
use crate::common::process::{http, listen_addr, serve_command, stop};
use crate::{assert_console_csp, console_app, header};
use std::process::Stdio;

#[tokio::test]
async fn console_is_served_with_index_fallback() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("index.html"), "<html>console</html>").unwrap();
    std::fs::write(dir.path().join("app.js"), "console.log(1)").unwrap();
    let mut config = tunnel_server::config::Config::in_memory();
    config.console_dir = Some(dir.path().to_owned());
    let app = TestApp::with_config(config).await;
    for (path, body) in [
        ("/", "<html>console</html>"),
        ("/app.js", "console.log(1)"),
        ("/credentials/cr_123", "<html>console</html>"),
    ] {
        let r = app
            .get(path)
            .without("authorization")
            .outside_api()
            .send(&app)
            .await;
        assert_eq!(r.status, 200, "{path}");
        assert_eq!(r.text, body, "{path}");
    }
    app.get("/api/unknown")
        .fails(&app, 404, "ERR_TUNNEL_130")
        .await;
}

#[tokio::test]
async fn the_builds_compressed_files_are_sent_and_hashed_names_kept_a_year() {
    let dir = tempfile::tempdir().unwrap();
    let file = |name: &str, body: &str| std::fs::write(dir.path().join(name), body).unwrap();
    // The compressed variants hold markers, not real compressed data: what is checked is which
    // file the server picks, and that it sends it as it is.
    let wasm = "app-0123456789abcdef_bg.wasm";
    file(wasm, "raw wasm");
    file(&format!("{wasm}.br"), "brotli wasm");
    file(&format!("{wasm}.gz"), "gzip wasm");
    file("index.html", "<html>console</html>");
    file("index.html.br", "brotli index");
    let mut config = tunnel_server::config::Config::in_memory();
    config.console_dir = Some(dir.path().to_owned());
    let app = TestApp::with_config(config).await;
    let get = |path: &str, accept: Option<&str>| {
        let mut call = app.get(path).without("authorization").outside_api();
        if let Some(accept) = accept {
            call = call.header("accept-encoding", accept);
        }
        call.send(&app)
    };
    let immutable = "public, max-age=31536000, immutable";
    for (accept, body, encoding) in [
        (Some("gzip, deflate, br"), "brotli wasm", Some("br")),
        (Some("gzip"), "gzip wasm", Some("gzip")),
        (None, "raw wasm", None),
    ] {
        let r = get(&format!("/{wasm}"), accept).await;
        assert_eq!(r.status, 200, "{accept:?}");
        assert_eq!(r.text, body, "{accept:?}");
        assert_eq!(
            r.headers
                .get("content-encoding")
                .map(|v| v.to_str().unwrap()),
            encoding,
            "{accept:?}"
        );
        assert_eq!(r.headers["cache-control"], immutable, "{accept:?}");
    }
    // The page and the client routes answered with it: revalidated, so a new build shows.
    for path in ["/", "/index.html", "/credentials/cr_1"] {
        let r = get(path, Some("br")).await;
        assert_eq!(r.status, 200, "{path}");
        assert_eq!(r.text, "brotli index", "{path}");
        assert_eq!(r.headers["content-encoding"], "br", "{path}");
        assert_eq!(r.headers["cache-control"], "no-cache", "{path}");
    }
    // Without a compressed variant (index.html has no .gz) it is compressed on the fly or not.
    let r = get("/", Some("identity")).await;
    assert_eq!(r.text, "<html>console</html>");
    // A missing file is not cached.
    let r = get("/robots.txt", None).await;
    assert_eq!(r.status, 404);
    assert!(r.headers.get("cache-control").is_none());
}

#[tokio::test]
async fn console_files_are_gzipped_for_browsers_that_ask() {
    let dir = tempfile::tempdir().unwrap();
    // Compressible and larger than the layer's minimum size.
    let wasm_like = "0123456789abcdef".repeat(4096);
    std::fs::write(dir.path().join("index.html"), "<html>console</html>").unwrap();
    std::fs::write(dir.path().join("app_bg.wasm"), &wasm_like).unwrap();
    let mut config = tunnel_server::config::Config::in_memory();
    config.console_dir = Some(dir.path().to_owned());
    let app = TestApp::with_config(config).await;
    let gzipped = app
        .get("/app_bg.wasm")
        .without("authorization")
        .header("accept-encoding", "gzip")
        .outside_api()
        .send(&app)
        .await;
    assert_eq!(gzipped.status, 200);
    assert_eq!(gzipped.headers["content-encoding"], "gzip");
    let plain = app
        .get("/app_bg.wasm")
        .without("authorization")
        .outside_api()
        .send(&app)
        .await;
    assert!(plain.headers.get("content-encoding").is_none());
    assert_eq!(plain.text, wasm_like);
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
    let mut child = serve_command(&db)
        .current_dir(dir.path())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let addr = listen_addr(&mut child);
    let (_, head, body) = http(addr, "GET", "/some/deep/link", &[], "");
    stop(child);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(body.ends_with("<html>default dist</html>"), "{body}");
    let lower = head.to_ascii_lowercase();
    assert!(
        lower.contains("content-security-policy: default-src 'none'; script-src"),
        "{head}"
    );
}
