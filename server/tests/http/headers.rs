//! Security headers on every response: the API's CSP for the API and the agent channel, the
//! console's (with the hash of its inline script) for its pages and files, 304s included.

use crate::{assert_common_headers, assert_console_csp, console_app, header};
use std::time::Duration;

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
