//! In-process tests of what the server's HTTP side does around the API: CORS (`cors`), the
//! security headers and the console's CSP (`headers`), serving the console's files
//! (`console`, `docs/console.md`), and compression (`compression`). One test binary; the
//! helpers below serve a console directory shaped like trunk's output and check its headers.

#[path = "../common/mod.rs"]
mod common;

mod compression;
mod console;
mod cors;
mod headers;

use common::{Resp, TestApp};
use tunnel_server::config::Config;

pub fn header<'a>(r: &'a Resp, name: &str) -> &'a str {
    r.headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
}

pub fn assert_common_headers(r: &Resp) {
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
pub const INLINE_SCRIPT: &str = "\nimport init from '/app.js';\nawait init();\n";
/// Its CSP hash source, computed outside the server (in Python:
/// `base64.b64encode(hashlib.sha256(INLINE_SCRIPT.encode()).digest())`).
pub const INLINE_SCRIPT_HASH: &str = "'sha256-mStLiw5ufhC4Rn65S+yuobFT1L6YIq0IsINW02YqTpc='";

/// An app serving a console directory shaped like trunk's output: `index.html` with an inline
/// module script, and the JS file it loads. The directory lives as long as the returned guard.
pub async fn console_app() -> (tempfile::TempDir, TestApp, String) {
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
pub fn assert_console_csp(r: &Resp, what: &str) {
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
