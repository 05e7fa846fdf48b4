//! Security headers on every response the server sends (API, console, agent channel); the
//! console's own policy is described in docs/console.md.
//!
//! - Everywhere: `X-Content-Type-Options: nosniff` (a JSON error is never run as a script),
//!   `Referrer-Policy: no-referrer` (console URLs hold resource ids), `X-Frame-Options: DENY`
//!   and CSP `frame-ancestors 'none'` (no clickjacking of a signed-in console).
//! - The API (`/api` and `/api/…`, and everything on `--api-listen`) and the agent channel
//!   (`/agent/v1/connect`):
//!   `default-src 'none'`: such a response is never a page and never needs to load anything.
//!   Whole path segments: `/apiary` is not the API but a client route, answered with the
//!   console's page, which the API's policy would blank.
//! - Everything else, that is the console (its pages, its files, the `index.html` fallback, and
//!   every status: 200, 304, 404): a CSP that lets the trunk-built Leptos app run and nothing
//!   else. Chosen by path, never by content type: a `304 Not Modified` to a reload has no
//!   `Content-Type`, and the browser applies the CSP of the 304 to the page it had cached, so
//!   a stricter policy there blanks the console on every reload. The console's JS, WASM and CSS
//!   get it too: a CSP on a non-HTML response restricts nothing, and one rule is simpler.
//!   - `script-src 'self' 'wasm-unsafe-eval' 'sha256-…'`: the app's JS module, compiling its
//!     WebAssembly, and trunk's inline bootstrap `<script type="module">` by hash. That script
//!     is static for a given build but names the hashed file names of the build, so its hash
//!     changes with every `trunk build`: the server computes it from `index.html` itself, and
//!     again whenever the file changes. No `'unsafe-inline'`: an injected inline script would
//!     have another hash.
//!   - `style-src 'self'`: the one stylesheet; the console sets no inline style.
//!   - `connect-src 'self' http: https:`: the sign-in screen lets the user point the console
//!     at another server's base URL, which the browser must be allowed to call (that server's
//!     own CORS still decides). Same-origin only would break that documented use; `*` would
//!     also allow `ws:`/`data:` and other schemes the console never needs.
//!   - `img-src 'self'` (the favicon), `base-uri 'none'`, `form-action 'none'`,
//!     `object-src 'none'`, `default-src 'none'` for the rest.

use axum::extract::Request;
use axum::http::header::CONTENT_SECURITY_POLICY;
use axum::http::{HeaderName, HeaderValue};
use axum::middleware::Next;
use axum::response::Response;
use sha2::{Digest as _, Sha256};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

/// CSP of the API's and the agent channel's responses.
pub const API_CSP: &str = "default-src 'none'; frame-ancestors 'none'";

/// The console's CSP without the hashes of the inline scripts.
const CONSOLE_CSP_BASE: &str = "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'";
const CONSOLE_CSP_REST: &str = "; style-src 'self'; img-src 'self'; \
     connect-src 'self' http: https:; base-uri 'none'; form-action 'none'; object-src 'none'; \
     frame-ancestors 'none'";

/// The console's CSP, kept in step with the `index.html` it is served with.
#[derive(Debug)]
pub struct ConsoleCsp {
    index: Option<PathBuf>,
    /// `(modification time of index.html, CSP)` of the last computation.
    cached: Mutex<Option<(Option<SystemTime>, HeaderValue)>>,
}

impl ConsoleCsp {
    /// For the console in `dir` (`None`: no console; the CSP then allows no inline script).
    pub fn new(dir: Option<&Path>) -> ConsoleCsp {
        ConsoleCsp {
            index: dir.map(|d| d.join("index.html")),
            cached: Mutex::new(None),
        }
    }

    /// The CSP for an HTML page of the console: recomputed only when `index.html` changed (one
    /// `stat` per page load otherwise), so a rebuilt console works without a server restart.
    pub fn header(&self) -> HeaderValue {
        let modified = self
            .index
            .as_ref()
            .and_then(|p| std::fs::metadata(p).ok())
            .and_then(|m| m.modified().ok());
        let mut cached = self.cached.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((at, value)) = cached.as_ref()
            && *at == modified
        {
            return value.clone();
        }
        let html = self
            .index
            .as_ref()
            .and_then(|p| std::fs::read_to_string(p).ok())
            .unwrap_or_default();
        let value = HeaderValue::from_str(&console_csp(&html))
            .unwrap_or_else(|_| HeaderValue::from_static(API_CSP));
        *cached = Some((modified, value.clone()));
        value
    }
}

/// The console's CSP for the page `html`: its inline scripts allowed by their SHA-256.
pub fn console_csp(html: &str) -> String {
    let mut csp = CONSOLE_CSP_BASE.to_owned();
    for script in inline_scripts(html) {
        csp.push_str(" 'sha256-");
        csp.push_str(&base64(&Sha256::digest(script.as_bytes())));
        csp.push('\'');
    }
    csp.push_str(CONSOLE_CSP_REST);
    csp
}

/// The contents of the `<script>` elements without a `src` attribute, exactly as the browser
/// hashes them (the text between `<script …>` and `</script>`).
fn inline_scripts(html: &str) -> Vec<&str> {
    // ASCII lower-casing keeps byte offsets, so positions found in `lower` index `html`.
    let lower = html.to_ascii_lowercase();
    let mut found = Vec::new();
    let mut at = 0;
    while let Some(start) = lower[at..].find("<script").map(|i| at + i) {
        let Some(open_end) = lower[start..].find('>').map(|i| start + i + 1) else {
            break;
        };
        let Some(close) = lower[open_end..].find("</script").map(|i| open_end + i) else {
            break;
        };
        let tag = &lower[start..open_end];
        if !tag.contains(" src=") && !tag.contains("\tsrc=") && !tag.contains("\nsrc=") {
            found.push(&html[open_end..close]);
        }
        at = close;
    }
    found
}

/// Standard base64 with padding (as CSP hash sources are written).
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18u32, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> shift) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Whether `path` is answered by the API or the agent channel (never by the console): the
/// same paths the router gives to them, compared by whole segments.
pub fn is_api_path(path: &str) -> bool {
    use tunnel_core::paths::{AGENT_CONNECT, API_PREFIX};
    path == AGENT_CONNECT
        || path
            .strip_prefix(API_PREFIX)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// The middleware: adds the headers to every response (a handler's own values are kept).
/// `console`: the console's policy, for its paths; `None` on a listener serving the API alone,
/// where every response gets the API's.
pub async fn headers(console: Option<Arc<ConsoleCsp>>, request: Request, next: Next) -> Response {
    // Decided from the request, before the response exists: a 304 says nothing of what it is.
    let console = console.filter(|_| !is_api_path(request.uri().path()));
    let mut response = next.run(request).await;
    let csp = match console {
        Some(console) => console.header(),
        None => HeaderValue::from_static(API_CSP),
    };
    let headers = response.headers_mut();
    let fixed: [(HeaderName, HeaderValue); 4] = [
        (
            HeaderName::from_static("x-content-type-options"),
            HeaderValue::from_static("nosniff"),
        ),
        (
            HeaderName::from_static("referrer-policy"),
            HeaderValue::from_static("no-referrer"),
        ),
        (
            HeaderName::from_static("x-frame-options"),
            HeaderValue::from_static("DENY"),
        ),
        (CONTENT_SECURITY_POLICY, csp),
    ];
    for (name, value) in fixed {
        headers.entry(name).or_insert(value);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_known_vectors() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
    }

    #[test]
    fn api_paths_are_whole_segments() {
        for path in ["/api", "/api/", "/api/credentials", "/agent/v1/connect"] {
            assert!(is_api_path(path), "{path}");
        }
        for path in [
            "/",
            "/apiary",
            "/api.txt",
            "/credentials/api",
            "/agent/v1/connect/x",
        ] {
            assert!(!is_api_path(path), "{path}");
        }
    }

    #[test]
    fn only_inline_scripts_are_hashed() {
        let html = "<head><script src=\"/a.js\"></script><SCRIPT type=\"module\">\nrun();\n</SCRIPT></head>";
        assert_eq!(inline_scripts(html), vec!["\nrun();\n"]);
        let csp = console_csp(html);
        let expected = base64(&Sha256::digest(b"\nrun();\n"));
        assert!(csp.contains(&format!("'sha256-{expected}'")), "{csp}");
        assert!(!csp.contains("unsafe-inline"), "{csp}");
    }
}
