//! The throughput and memory baseline: the same axum and tokio as `tunnel-server`, one handler
//! answering every request with a constant JSON body (about the size of one credential), no
//! database, no auth. Run as its own process (`tunnel-bench baseline-server`) so it is measured
//! exactly like the real server: separate process, multi-threaded runtime, loopback socket.

use anyhow::Result;
use axum::Router;
use axum::http::header;
use axum::response::IntoResponse;
use std::net::SocketAddr;

/// A credential-shaped constant body (~300 bytes, like `GET /api/credentials/{id}`).
const BODY: &str = r#"{"id":"cr_0000000000000000000000000000","uri":"http://127.0.0.1:1/api/credentials/cr_0000000000000000000000000000","created_at":"2026-01-01T00:00:00Z","description":"constant baseline body","metadata":"","token":null,"acl":["bind:*.example.com"],"owner_id":"usr_0000000000000000000000000000"}"#;

async fn constant() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "application/json")], BODY)
}

pub fn serve(listen: SocketAddr) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let app = Router::new().fallback(constant);
        let listener = tokio::net::TcpListener::bind(listen).await?;
        axum::serve(listener, app).await?;
        Ok(())
    })
}
