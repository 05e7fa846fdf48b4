//! `tunnel-server`: a self-hostable implementation of the Tunnel Management API (axum + tokio,
//! embedded SQLite), serving the browser console too, and the operator CLI.
//!
//! Code map, in layers (a module imports only from the layers below it, so there is no import
//! circle):
//! - HTTP: [`app`] (the whole application, used by `main` and by the tests alike; [`api_alone`]
//!   the API at the root of `--api-listen`), [`api`] (one
//!   module per API area with its `router()`, the generic resource handlers, the agent channel's
//!   WebSocket upgrade, and `api::openapi` describing them), [`auth`] (the `Caller` extractor:
//!   `Service-Version`, Bearer API key, query parameters), [`json`] (the JSON body extractor),
//!   [`paging`] (`limit` / `before_id` and `next_page_uri`), [`security`] (security headers), [`caching`] (`Cache-Control` of the console's files).
//! - Errors: [`error`], the one error type and its one mapping to the wire error body; the store's
//!   and the agent service's failures convert into it.
//! - Services: [`ratelimit`] (the rate limits' buckets; the 429 itself is `auth`'s), [`agents`] (live tunnel sessions, the agent channel, the delivery of agent
//!   commands: no routing, nothing of `api`), [`keys`] (SSH CA key generation and sealing),
//!   [`webhooks`] (the delivery of events to webhook destinations: signing, the address check,
//!   retries; it gets the wire form of events from `api`, and imports nothing of it).
//! - Data: [`store`], ALL the SQL (and migrations), with its own error type; nothing else knows the
//!   database.
//! - Setup: [`config`] (the `serve` options and the runtime configuration), [`state`] (what every
//!   handler sees), [`cli`] (`serve` and the operator commands: accounts, users, bootstrap key),
//!   [`metrics`] (the gauges of `--metrics-listen`, on a listener of their own).
//! - Below everything: [`secret`], a string whose `Debug` never shows it; [`response`], the JSON
//!   response body (`error`'s bodies and the handlers').
//!
//! Invariants: secrets (authtokens, API keys, private keys, webhook signing secrets) are never logged and are stored only
//! hashed or sealed; every query is scoped by the caller's account; 5xx bodies carry no
//! internals.

pub mod agents;
pub mod api;
pub mod auth;
pub mod caching;
pub mod cli;
pub mod config;
pub mod error;
pub mod json;
pub mod keys;
pub mod metrics;
pub mod paging;
pub mod ratelimit;
pub mod response;
pub mod retention;
pub mod secret;
pub mod security;
pub mod serve;
pub mod state;
pub mod store;
pub mod webhooks;

use crate::error::{ApiError, OPERATION_ID, new_operation_id};
use axum::Router;
use axum::extract::{OriginalUri, Request};
use axum::http::{HeaderName, HeaderValue, Method, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use state::AppState;
use tower_http::compression::CompressionLayer;
use tower_http::cors::{AllowOrigin, CorsLayer};
use tower_http::services::{ServeDir, ServeFile};
use tower_http::trace::TraceLayer;
use tunnel_core::errors::ErrorCode;
use tunnel_core::paths::{API_PREFIX, OPERATION_ID_HEADER, VERSION_HEADER};

/// The application: the API under `/api`, the agent channel, and the console at `/`.
pub fn app(state: AppState) -> Router {
    let router = Router::new()
        .nest(API_PREFIX, api(&state))
        // `nest` covers `/api` and `/api/…` but not `/api/`, which would reach the console.
        .route("/api/", axum::routing::any(route_not_found))
        .merge(api::agent_channel::router())
        .merge(api::cluster::router());
    let console_csp = std::sync::Arc::new(security::ConsoleCsp::new(
        state.config.console_dir.as_deref(),
    ));
    let router = match &state.config.console_dir {
        // Client-side routes of the console (e.g. /credentials/cr_…) get index.html; a missing
        // file (a path whose last segment has an extension, like /robots.txt) is a 404. Each
        // file is sent as the build compressed it (`<file>.br`, `<file>.gz`, chosen by
        // `Accept-Encoding`; brotli makes the WASM about a fifth smaller than gzip), and
        // compressed on the fly with gzip when the build did not (a `trunk build` by hand).
        Some(dir) => {
            let index = ServeFile::new(dir.join("index.html"))
                .precompressed_br()
                .precompressed_gzip();
            let spa = tower::service_fn(move |request: Request| {
                let index = index.clone();
                async move {
                    if names_a_file(request.uri().path()) {
                        return Ok::<_, std::convert::Infallible>(
                            (axum::http::StatusCode::NOT_FOUND, "Not found.\n").into_response(),
                        );
                    }
                    Ok(tower::ServiceExt::oneshot(index, request)
                        .await
                        .map(IntoResponse::into_response)
                        .unwrap_or_else(|e| match e {}))
                }
            });
            router.fallback_service(
                tower::ServiceBuilder::new()
                    .layer(middleware::from_fn(caching::console_caching))
                    .layer(CompressionLayer::new())
                    .service(
                        ServeDir::new(dir)
                            .precompressed_br()
                            .precompressed_gzip()
                            .fallback(spa),
                    ),
            )
        }
        None => router.fallback(no_console),
    };
    outermost(router, Some(console_csp)).with_state(state)
}

/// The API alone at the root of its address (`--api-listen`, docs/api/README.md), as ngrok's
/// own API is served: the official Rust client joins its paths (`/credentials`) to the root of
/// its base URL, dropping any `/api`. Nothing else is served there.
pub fn api_alone(state: AppState) -> Router {
    outermost(api(&state), None).with_state(state)
}

/// The API's routes with what every API request goes through, at the root of the router.
fn api(state: &AppState) -> Router<AppState> {
    // JSON compresses well (a page of 100 credentials shrinks about 5x); small bodies are left
    // as they are by the layer's default predicate. On this router only: the agent channel's
    // WebSocket upgrade is never wrapped.
    let api = api::router()
        .fallback(route_not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(middleware::from_fn_with_state(
            state.clone(),
            auth::throttle,
        ))
        .layer(middleware::from_fn(operation_id))
        .layer(CompressionLayer::new());
    match cors(&state.config.cors_origins) {
        Some(cors) => api.layer(cors),
        None => api,
    }
}

/// The layers around everything a listener serves: the security headers (the console's
/// policy on its pages when `console` is given, the API's on everything else) and tracing.
fn outermost(
    router: Router<AppState>,
    console: Option<std::sync::Arc<security::ConsoleCsp>>,
) -> Router<AppState> {
    router
        // Outermost but for tracing: every response gets the headers, CORS preflights and the
        // console's static files included.
        .layer(middleware::from_fn(move |request, next| {
            security::headers(console.clone(), request, next)
        }))
        // A 5xx is logged where it arises, with its operation id (an internal error at ERROR,
        // an agent or node that did not answer at WARN): the trace layer's own line for it is a
        // WARN, not a second ERROR without the id that alerts would count.
        .layer(
            TraceLayer::new_for_http()
                .on_failure(tower_http::trace::DefaultOnFailure::new().level(tracing::Level::WARN)),
        )
}

/// Gives every API request an operation id: in the `Operation-Id` header of every response,
/// and (through the task-local) in the body of every error. A request that may change
/// something (any method but `GET`, `HEAD`, `OPTIONS` and `TRACE`) runs in a task of its own,
/// to its end even when its client goes away: a write is never abandoned between two of its
/// statements (a write of the store's shared record code would take the writes committing with
/// it down, docs/database.md), and what it did never depends on the connection.
async fn operation_id(request: Request, next: Next) -> Response {
    let id = new_operation_id();
    let safe = request.method().is_safe();
    let work = OPERATION_ID.scope(id.clone(), next.run(request));
    let mut response = if safe {
        work.await
    } else {
        use tracing::Instrument as _;
        match tokio::spawn(work.instrument(tracing::Span::current())).await {
            Ok(response) => response,
            // A panic goes on as it would have in the connection's task.
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            // Cancelled: the runtime is shutting down under it.
            Err(e) => OPERATION_ID.sync_scope(id.clone(), || {
                ApiError::Internal(anyhow::anyhow!("the request's task ended: {e}")).into_response()
            }),
        }
    };
    if let Ok(value) = HeaderValue::from_str(&id) {
        response.headers_mut().insert(OPERATION_ID_HEADER, value);
    }
    response
}

async fn route_not_found(method: Method, OriginalUri(uri): OriginalUri) -> ApiError {
    let path: String = uri.path().chars().take(200).collect();
    ApiError::new(
        ErrorCode::RouteNotFound,
        format!("No API operation exists at {method} {path}."),
    )
    .with_detail("path", path)
}

async fn method_not_allowed(method: Method, OriginalUri(uri): OriginalUri) -> ApiError {
    let path: String = uri.path().chars().take(200).collect();
    ApiError::new(
        ErrorCode::MethodNotAllowed,
        format!("{path} does not accept {method}."),
    )
}

/// Whether a path's last segment names a file (a name, a dot and an extension of letters and
/// digits: `style-1a2b.css`): such a path is never a client-side route of the console (ids and
/// route names have no dots), and a missing file is a 404, not the console's page. A segment
/// with dots that is no file name (`..%2Fapi`, `ev_x%2F..`) is the console's to say "Page not
/// found".
fn names_a_file(path: &str) -> bool {
    path.rsplit('/')
        .next()
        .and_then(|last| last.rsplit_once('.'))
        .is_some_and(|(name, extension)| {
            !name.is_empty()
                && (1..=10).contains(&extension.len())
                && extension.bytes().all(|b| b.is_ascii_alphanumeric())
        })
}

async fn no_console() -> Response {
    (
        axum::http::StatusCode::NOT_FOUND,
        "Not found. (This server runs without --console-dir: only the API under /api is served.)\n",
    )
        .into_response()
}

/// CORS for a console served from elsewhere (docs/api/README.md): only the configured origins, with
/// the API's request headers; `Operation-Id` is exposed so the console can show it, and
/// `Retry-After` with the `RateLimit-*` headers so it can wait out a 429.
///
/// The origins were checked by [`config::Config::parse_cors_origins`]; a `*` that reached here
/// anyway (a `Config` built in code) is left out, never passed to `AllowOrigin::list`, which
/// panics on it.
fn cors(origins: &[String]) -> Option<CorsLayer> {
    let origins: Vec<HeaderValue> = origins
        .iter()
        .map(|o| o.trim_end_matches('/'))
        .filter(|o| *o != "*")
        .filter_map(|o| HeaderValue::from_str(o).ok())
        .collect();
    if origins.is_empty() {
        return None;
    }
    Some(
        CorsLayer::new()
            .allow_origin(AllowOrigin::list(origins))
            .allow_methods([
                Method::GET,
                Method::POST,
                Method::PUT,
                Method::PATCH,
                Method::DELETE,
            ])
            .allow_headers([
                header::AUTHORIZATION,
                header::CONTENT_TYPE,
                HeaderName::from_bytes(VERSION_HEADER.as_bytes()).expect("valid header name"),
            ])
            .expose_headers([
                HeaderName::from_bytes(OPERATION_ID_HEADER.as_bytes()).expect("valid header name"),
                header::RETRY_AFTER,
                HeaderName::from_static(auth::RATE_LIMIT_LIMIT),
                HeaderName::from_static(auth::RATE_LIMIT_REMAINING),
                HeaderName::from_static(auth::RATE_LIMIT_RESET),
            ])
            .max_age(std::time::Duration::from_secs(600)),
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_file_names_are_files() {
        for file in [
            "/style-1a2b.css",
            "/tunnel-web-9f_bg.wasm",
            "/index.html",
            "/a/b.js",
        ] {
            assert!(super::names_a_file(file), "{file}");
        }
        for route in [
            "/credentials",
            "/credentials/cr_1",
            "/credentials/..%2Fapi",
            "/activity/ev_x%2F..%2F..",
            "/credentials/..",
            "/credentials/.hidden",
            "/x/a.b%2Fc",
        ] {
            assert!(!super::names_a_file(route), "{route}");
        }
    }

    use axum::Router;
    use axum::body::Body;
    use axum::http::Request;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;
    use tokio::sync::Semaphore;
    use tower::ServiceExt as _;

    /// A request that may change something finishes after its client is gone; a read stops.
    #[tokio::test]
    async fn changes_run_to_their_end_without_their_client() {
        let gate = Arc::new(Semaphore::new(0));
        let done = Arc::new(AtomicUsize::new(0));
        let handler = {
            let (gate, done) = (gate.clone(), done.clone());
            move || async move {
                let _pass = gate.acquire().await;
                done.fetch_add(1, Ordering::SeqCst);
            }
        };
        let router = Router::new()
            .route("/x", axum::routing::get(handler.clone()).post(handler))
            .layer(axum::middleware::from_fn(super::operation_id));
        for method in ["GET", "POST"] {
            let request = Request::builder()
                .method(method)
                .uri("/x")
                .body(Body::empty());
            let call = router.clone().oneshot(request.unwrap());
            // The client gives up while the handler waits.
            let gone = tokio::time::timeout(Duration::from_millis(50), call).await;
            assert!(gone.is_err(), "{method} answered before the gate opened");
        }
        gate.add_permits(2);
        tokio::time::sleep(Duration::from_millis(100)).await;
        // Only the POST's handler went on, and ran to its end.
        assert_eq!(done.load(Ordering::SeqCst), 1);
    }
}
