//! A webhook receiver: a real HTTP server on 127.0.0.1 recording every request, answering each
//! as planned (a status after a delay), and verifying signatures with the `standardwebhooks`
//! crate, not the server's code.

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;

/// How the receiver answers one request.
#[derive(Debug, Clone, Copy)]
pub struct Reply {
    pub status: u16,
    pub delay: Duration,
}

impl Reply {
    pub const OK: Reply = Reply::status(200);

    pub const fn status(status: u16) -> Reply {
        Reply {
            status,
            delay: Duration::ZERO,
        }
    }

    /// Answers 200 only after `delay`.
    pub const fn after(delay: Duration) -> Reply {
        Reply { status: 200, delay }
    }
}

/// A request the receiver got.
#[derive(Debug, Clone)]
pub struct Received {
    pub headers: HeaderMap,
    pub body: Bytes,
    pub at: tokio::time::Instant,
}

impl Received {
    pub fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap()
    }

    /// Whether the request verifies with `secret` (Standard Webhooks: id, timestamp within 5
    /// minutes, one of the `v1` signatures).
    pub fn verifies_with(&self, secret: &str) -> bool {
        standardwebhooks::Webhook::new(secret)
            .unwrap()
            .verify(&self.body, &self.headers)
            .is_ok()
    }
}

struct Shared {
    plan: Mutex<VecDeque<Reply>>,
    got: mpsc::UnboundedSender<Received>,
}

pub struct Receiver {
    pub url: String,
    shared: Arc<Shared>,
    arrivals: tokio::sync::Mutex<mpsc::UnboundedReceiver<Received>>,
}

impl std::fmt::Debug for Receiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Receiver")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl Receiver {
    /// A receiver answering the replies of `plan` in order, then 200s.
    pub async fn start(plan: &[Reply]) -> Receiver {
        let (got, arrivals) = mpsc::unbounded_channel();
        let shared = Arc::new(Shared {
            plan: Mutex::new(plan.iter().copied().collect()),
            got,
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let app = Router::new()
            .route("/hook", post(receive))
            .with_state(shared.clone());
        tokio::spawn(async move { axum::serve(listener, app).await });
        Receiver {
            url: format!("http://{addr}/hook"),
            shared,
            arrivals: tokio::sync::Mutex::new(arrivals),
        }
    }

    /// Adds replies to the plan.
    pub fn then(&self, replies: &[Reply]) {
        self.shared.plan.lock().unwrap().extend(replies);
    }

    /// The next request, waiting up to `within`.
    pub async fn next(&self, within: Duration) -> Received {
        let mut arrivals = self.arrivals.lock().await;
        tokio::time::timeout(within, arrivals.recv())
            .await
            .expect("no webhook arrived in time")
            .unwrap()
    }

    /// Asserts that no request arrives for `quiet`.
    pub async fn nothing_for(&self, quiet: Duration) {
        let mut arrivals = self.arrivals.lock().await;
        if let Ok(Some(got)) = tokio::time::timeout(quiet, arrivals.recv()).await {
            panic!("unexpected webhook: {}", String::from_utf8_lossy(&got.body));
        }
    }
}

async fn receive(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> StatusCode {
    let reply = shared.plan.lock().unwrap().pop_front().unwrap_or(Reply::OK);
    let _ = shared.got.send(Received {
        headers,
        body,
        at: tokio::time::Instant::now(),
    });
    tokio::time::sleep(reply.delay).await;
    StatusCode::from_u16(reply.status).unwrap()
}
