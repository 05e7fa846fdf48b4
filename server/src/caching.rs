//! How long browsers keep the console's files (docs/console.md, how the console is served):
//! a file whose name carries the build's content hash (`tunnel-web-<16 hex>_bg.wasm`,
//! `style-<16 hex>.css`) never changes under that name, so it is kept a year without asking
//! again; everything else (`index.html`, which names the hashed files of the current build, and
//! the client routes answered with it) is revalidated on every load, so a new build is seen
//! at once.

use axum::extract::Request;
use axum::http::{HeaderValue, header};
use axum::middleware::Next;
use axum::response::Response;

/// `Cache-Control` of a file named by its content.
pub const IMMUTABLE: &str = "public, max-age=31536000, immutable";
/// `Cache-Control` of everything else: kept, but asked about again before each use.
pub const REVALIDATE: &str = "no-cache";

/// The middleware of the console's files: the header by the requested name, on answers that
/// carry the file (200, 206 and the 304 of a revalidation); errors are not cached.
pub async fn console_caching(request: Request, next: Next) -> Response {
    let hashed = names_hashed_file(request.uri().path());
    let mut response = next.run(request).await;
    let status = response.status().as_u16();
    if matches!(status, 200 | 206 | 304) {
        let value = if hashed { IMMUTABLE } else { REVALIDATE };
        response
            .headers_mut()
            .insert(header::CACHE_CONTROL, HeaderValue::from_static(value));
    }
    response
}

/// Whether the last segment of `path` is a file name with trunk's hash: `<name>-<hex>`
/// followed by `.` or `_` (`_bg.wasm`). Trunk writes a 64-bit hash in hex without its
/// leading zeros: 16 digits mostly, 15 in one build of 16, fewer ever more rarely; 12 to 16
/// are taken (fewer come once in 65 536 builds, and such a build's files are revalidated).
fn names_hashed_file(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or_default();
    let Some((_, after)) = name.rsplit_once('-') else {
        return false;
    };
    let hash = after.split(['.', '_']).next().unwrap_or_default();
    (12..=16).contains(&hash.len())
        && after.len() > hash.len()
        && hash
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

#[cfg(test)]
mod tests {
    use super::names_hashed_file;

    #[test]
    fn only_trunks_hashed_names_are_immutable() {
        for hashed in [
            "/tunnel-web-a3fbf7f1aafcd032_bg.wasm",
            "/tunnel-web-a3fbf7f1aafcd032.js",
            "/style-1b3f52303914f878.css",
            "/favicon-17e8d96ef1516df3.svg",
            // A hash with a leading zero, as trunk writes it.
            "/tunnel-web-228d7ad2829c5e3_bg.wasm",
            "/style-1b3f52303914f87.css",
        ] {
            assert!(names_hashed_file(hashed), "{hashed}");
        }
        for not in [
            "/",
            "/index.html",
            "/credentials/cr_2abc",
            "/tls-edges",
            "/style-1b3f5230391.css",
            "/style-1b3f52303914f8780.css",
            "/style-1B3F52303914F878.css",
            "/style-1b3f52303914f878",
            "/x-1b3f52303914f878zz.css",
        ] {
            assert!(!names_hashed_file(not), "{not}");
        }
    }
}
