//! Webhook delivery: how fast events reach a receiver on loopback, from the API's 201 to the
//! webhook's arrival (p50 / p99), and how many deliveries per second a burst of changes gets
//! out, against a plain `POST` of an event-sized body to the same receiver (the cost of the HTTP
//! request alone, without the event, the queue, signing or recording the attempt).

use super::number;
use crate::http::{Conn, MakeReq, Req, load, sequential};
use crate::report::{Row, Section, ms};
use crate::server::Server;
use crate::stats::percentile;
use anyhow::{Context as _, Result, bail};
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::post;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Notify;

pub const NAME: &str = "webhooks";

/// Changes measured one at a time for the latency, after a few unmeasured ones.
const LATENCY_RUNS: usize = 200;
const WARMUP: usize = 10;
/// Changes of the burst, and the connections making them.
const BURST: usize = 800;
const CONNECTIONS: usize = 16;
/// The longest a webhook may take to arrive before the section fails.
const PATIENCE: Duration = Duration::from_secs(30);

/// What the receiver saw: when each event's webhook arrived, by the event's object id.
#[derive(Default)]
struct Arrivals {
    by_object: Mutex<HashMap<String, Instant>>,
    count: AtomicU64,
    notify: Notify,
}

async fn receive(State(arrivals): State<Arc<Arrivals>>, body: Bytes) -> StatusCode {
    let at = Instant::now();
    if let Ok(event) = serde_json::from_slice::<serde_json::Value>(&body)
        && let Some(object) = event["object_id"].as_str()
    {
        arrivals
            .by_object
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(object.to_owned(), at);
        arrivals.count.fetch_add(1, Ordering::Relaxed);
        arrivals.notify.notify_waiters();
    }
    StatusCode::OK
}

impl Arrivals {
    /// When the webhook about `object` arrived, waiting for it.
    async fn of(&self, object: &str) -> Result<Instant> {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let notified = self.notify.notified();
            if let Some(at) = self
                .by_object
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get(object)
            {
                return Ok(*at);
            }
            if Instant::now() > deadline {
                bail!("no webhook about {object} within {PATIENCE:?}");
            }
            let _ = tokio::time::timeout(Duration::from_millis(100), notified).await;
        }
    }

    /// Waits until `n` webhooks arrived in all; when the last did.
    async fn count_reaches(&self, n: u64) -> Result<Instant> {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let notified = self.notify.notified();
            if self.count.load(Ordering::Relaxed) >= n {
                return Ok(Instant::now());
            }
            if Instant::now() > deadline {
                bail!(
                    "only {} of {n} webhooks within {PATIENCE:?}",
                    self.count.load(Ordering::Relaxed)
                );
            }
            let _ = tokio::time::timeout(Duration::from_millis(20), notified).await;
        }
    }
}

pub async fn measure(server: &Server) -> Result<Section> {
    let mut s = Section::new(
        number(NAME),
        "Webhook delivery",
        "A receiver on loopback (axum, in the bench process, answering 200 at once) subscribed \
         to `credential_created.v0`; the server runs with `--allow-private-webhooks`. Latency: \
         one `POST /api/credentials` at a time, from reading its 201 to the webhook's arrival \
         (0 when the webhook came first). Throughput: a burst of creates by 16 connections, \
         until the last webhook arrived. Baseline: a plain `POST` of an event-sized JSON body \
         to the same receiver (one at a time for latency, 16 connections for throughput).",
    );
    let arrivals = Arc::new(Arrivals::default());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let receiver: SocketAddr = listener.local_addr()?;
    let app = Router::new()
        .route("/hook", post(receive))
        .with_state(arrivals.clone());
    let receiving = tokio::spawn(async move { axum::serve(listener, app).await });

    let mut conn = server.conn();
    let destination = conn
        .json(&server.post(
            "/event_destinations",
            &format!(r#"{{"target":{{"webhook":{{"url":"http://{receiver}/hook"}}}}}}"#),
        ))
        .await?;
    let destination = destination["id"].as_str().context("destination id")?;
    conn.json(&server.post(
        "/event_subscriptions",
        &format!(
            r#"{{"sources":[{{"type":"credential_created.v0"}}],"destination_ids":["{destination}"]}}"#
        ),
    ))
    .await?;

    // Latency, one change at a time.
    let create = server.post("/credentials", r#"{"description":"bench webhook"}"#);
    let mut after_201 = Vec::new();
    let mut end_to_end = Vec::new();
    let mut body_size = 0;
    for i in 0..WARMUP + LATENCY_RUNS {
        let sent = Instant::now();
        let created = conn.json(&create).await?;
        let answered = Instant::now();
        let id = created["id"].as_str().context("credential id")?;
        let arrived = arrivals.of(id).await?;
        if i >= WARMUP {
            after_201.push(arrived.saturating_duration_since(answered).as_secs_f64() * 1000.0);
            end_to_end.push(arrived.duration_since(sent).as_secs_f64() * 1000.0);
        }
        body_size = created.to_string().len();
    }
    // An event carries the object (about the size of the 201's body) and ~400 bytes more.
    let plain_body = format!(r#"{{"pad":"{}"}}"#, "x".repeat(body_size + 400));
    let plain = Req::post("/hook", None, plain_body.clone());
    let base = sequential(receiver, &plain, WARMUP, LATENCY_RUNS).await?;
    let (b50, b99) = (percentile(&base, 50.0), percentile(&base, 99.0));
    for (figure, values) in [
        ("201 → webhook arrival", &after_201),
        ("request sent → webhook arrival", &end_to_end),
    ] {
        for p in [50.0, 99.0] {
            let (m, b) = (percentile(values, p), if p == 50.0 { b50 } else { b99 });
            s.rows.push(Row::new(
                format!("{figure} p{p:.0}"),
                ms(m),
                format!("{} (plain POST)", ms(b)),
                Some(m / b),
            ));
        }
    }

    // Throughput: a burst of changes, until every webhook arrived.
    let before = arrivals.count.load(Ordering::Relaxed);
    let started = Instant::now();
    let mut makers = Vec::new();
    for _ in 0..CONNECTIONS {
        let (create, mut conn) = (create.clone(), Conn::new(server.addr));
        makers.push(tokio::spawn(async move {
            for _ in 0..BURST / CONNECTIONS {
                conn.json(&create).await?;
            }
            anyhow::Ok(())
        }));
    }
    for maker in makers {
        maker.await??;
    }
    let created_in = started.elapsed().as_secs_f64();
    let last = arrivals
        .count_reaches(before + (BURST / CONNECTIONS * CONNECTIONS) as u64)
        .await?;
    let seconds = last.duration_since(started).as_secs_f64();
    let rate = BURST as f64 / seconds;
    let make: MakeReq = Arc::new(move |_| Req::post("/hook", None, plain_body.clone()));
    let baseline = load(receiver, CONNECTIONS, Duration::from_secs(2), make).await?;
    s.rows.push(Row::new(
        format!("deliveries per second ({BURST} creates by {CONNECTIONS} connections)"),
        format!("{rate:.0} /s"),
        format!("{:.0} req/s (plain POSTs)", baseline.rps),
        Some(rate / baseline.rps),
    ));
    s.notes.push(format!(
        "The burst's creates took {created_in:.2} s and its last webhook arrived {seconds:.2} s \
         after the first create: the rate is bounded by how fast the API takes the creates \
         (section 3), and the gap between the two times is how far deliveries trail the \
         changes. Webhook bodies are about {} bytes.",
        body_size + 400
    ));
    println!(
        "    webhooks: p50 {:.2} ms after the 201, {rate:.0} deliveries/s",
        percentile(&after_201, 50.0)
    );
    s.raw = serde_json::json!({
        "after_201_ms": after_201, "end_to_end_ms": end_to_end, "baseline_ms": base,
        "burst": BURST, "burst_seconds": seconds, "creates_seconds": created_in,
        "baseline_load": baseline.json(),
    });
    receiving.abort();
    Ok(s)
}
