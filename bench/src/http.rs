//! A minimal HTTP/1.1 client (hyper's connection API, one keep-alive connection per [`Conn`])
//! and the load generator built on it.
//!
//! Hand-rolled rather than `oha`: it builds in seconds from crates already in the workspace,
//! needs no install, and records every latency so p50/p99 are exact over the whole run.

use anyhow::{Context, Result, bail};
use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use hyper::Request;
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One request to send: method, path (with query), optional bearer key, optional JSON body.
#[derive(Debug, Clone)]
pub struct Req {
    pub method: hyper::Method,
    pub path: String,
    pub key: Option<String>,
    pub body: Option<String>,
}

impl Req {
    pub fn get(path: impl Into<String>, key: Option<&str>) -> Req {
        Req {
            method: hyper::Method::GET,
            path: path.into(),
            key: key.map(str::to_owned),
            body: None,
        }
    }

    pub fn post(path: impl Into<String>, key: Option<&str>, body: impl Into<String>) -> Req {
        Req::with_body(hyper::Method::POST, path, key, body)
    }

    /// A request of `method` carrying the JSON `body`.
    pub fn with_body(
        method: hyper::Method,
        path: impl Into<String>,
        key: Option<&str>,
        body: impl Into<String>,
    ) -> Req {
        Req {
            method,
            path: path.into(),
            key: key.map(str::to_owned),
            body: Some(body.into()),
        }
    }

    fn build(&self, addr: SocketAddr) -> Result<Request<Full<Bytes>>> {
        let mut builder = Request::builder()
            .method(self.method.clone())
            .uri(&self.path)
            .header(hyper::header::HOST, addr.to_string())
            .header("Service-Version", "2");
        if let Some(key) = &self.key {
            builder = builder.header(hyper::header::AUTHORIZATION, format!("Bearer {key}"));
        }
        let body = match &self.body {
            Some(b) => {
                builder = builder.header(hyper::header::CONTENT_TYPE, "application/json");
                Full::new(Bytes::from(b.clone()))
            }
            None => Full::new(Bytes::new()),
        };
        Ok(builder.body(body)?)
    }
}

/// One keep-alive HTTP/1.1 connection; reconnects once when the server closed it.
#[derive(Debug)]
pub struct Conn {
    addr: SocketAddr,
    sender: Option<SendRequest<Full<Bytes>>>,
}

impl Conn {
    pub fn new(addr: SocketAddr) -> Conn {
        Conn { addr, sender: None }
    }

    async fn connect(&mut self) -> Result<&mut SendRequest<Full<Bytes>>> {
        if self.sender.as_ref().is_none_or(SendRequest::is_closed) {
            let stream = tokio::net::TcpStream::connect(self.addr)
                .await
                .with_context(|| format!("connecting to {}", self.addr))?;
            stream.set_nodelay(true)?;
            let (sender, connection) =
                hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
            tokio::spawn(connection);
            self.sender = Some(sender);
        }
        Ok(self.sender.as_mut().expect("connected above"))
    }

    /// Sends `req` and reads the whole response: `(status, body)`.
    pub async fn send(&mut self, req: &Req) -> Result<(u16, Bytes)> {
        let request = req.build(self.addr)?;
        let sender = self.connect().await?;
        sender.ready().await?;
        let response = sender.send_request(request).await?;
        let status = response.status().as_u16();
        let body = response.into_body().collect().await?.to_bytes();
        Ok((status, body))
    }

    /// Sends `req` and parses a 2xx JSON response; any other status is an error with the body.
    pub async fn json(&mut self, req: &Req) -> Result<serde_json::Value> {
        let (status, body) = self.send(req).await?;
        ensure_success(req, status, &body)?;
        if body.is_empty() {
            return Ok(serde_json::Value::Null);
        }
        serde_json::from_slice(&body).context("response is not JSON")
    }
}

/// What a load run measured.
#[derive(Debug, Clone)]
pub struct LoadResult {
    pub requests: u64,
    pub errors: u64,
    pub seconds: f64,
    pub rps: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
}

impl LoadResult {
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "requests": self.requests, "errors": self.errors, "seconds": self.seconds,
            "rps": self.rps, "p50_ms": self.p50_ms, "p99_ms": self.p99_ms,
        })
    }
}

/// Makes the `n`-th request of a load run.
pub type MakeReq = Arc<dyn Fn(u64) -> Req + Send + Sync>;

/// The most requests one load run sends, whatever the duration (keeps memory bounded).
const MAX_REQUESTS: u64 = 5_000_000;

/// `connections` workers, each on its own keep-alive connection, send `make(n)` back to back for
/// `duration`. A response that is not 2xx counts as an error (and its latency is not kept).
pub async fn load(
    addr: SocketAddr,
    connections: usize,
    duration: Duration,
    make: MakeReq,
) -> Result<LoadResult> {
    Ok(load_samples(addr, connections, duration, make)
        .await?
        .result())
}

/// What load runs recorded, before it is summed up: every latency, so that the runs of a figure
/// measured in rounds ([`Samples::add`]) give exact percentiles over all of them.
#[derive(Debug, Default)]
pub struct Samples {
    latencies_us: Vec<u32>,
    errors: u64,
    seconds: f64,
}

impl Samples {
    /// Adds the run `other` to these.
    pub fn add(&mut self, other: Samples) {
        self.latencies_us.extend(other.latencies_us);
        self.errors += other.errors;
        self.seconds += other.seconds;
    }

    /// The throughput over the runs' time together, and the percentiles of all their latencies.
    pub fn result(mut self) -> LoadResult {
        let all = &mut self.latencies_us;
        all.sort_unstable();
        let pick = |p: f64| -> f64 {
            if all.is_empty() {
                return f64::NAN;
            }
            let rank = ((p / 100.0) * all.len() as f64).ceil() as usize;
            f64::from(all[rank.clamp(1, all.len()) - 1]) / 1000.0
        };
        LoadResult {
            requests: all.len() as u64,
            errors: self.errors,
            seconds: self.seconds,
            rps: all.len() as f64 / self.seconds,
            p50_ms: pick(50.0),
            p99_ms: pick(99.0),
        }
    }
}

/// [`load`]'s run, its latencies kept.
pub async fn load_samples(
    addr: SocketAddr,
    connections: usize,
    duration: Duration,
    make: MakeReq,
) -> Result<Samples> {
    let started = Instant::now();
    let deadline = started + duration;
    let counter = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let mut workers = Vec::with_capacity(connections);
    for _ in 0..connections {
        let make = make.clone();
        let counter = counter.clone();
        workers.push(tokio::spawn(async move {
            let mut conn = Conn::new(addr);
            let mut latencies_us: Vec<u32> = Vec::with_capacity(64 * 1024);
            let mut errors = 0u64;
            while Instant::now() < deadline {
                let n = counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if n >= MAX_REQUESTS {
                    break;
                }
                let req = make(n);
                let sent = Instant::now();
                match conn.send(&req).await {
                    Ok((status, _)) if (200..300).contains(&status) => {
                        let us = u32::try_from(sent.elapsed().as_micros()).unwrap_or(u32::MAX);
                        latencies_us.push(us);
                    }
                    _ => errors += 1,
                }
            }
            (latencies_us, errors)
        }));
    }
    let mut samples = Samples::default();
    for worker in workers {
        let (lat, err) = worker.await?;
        samples.latencies_us.extend(lat);
        samples.errors += err;
    }
    samples.seconds = started.elapsed().as_secs_f64();
    Ok(samples)
}

/// Latencies in ms of `count` requests sent one after the other on one connection, after
/// `warmup` unmeasured ones. Non-2xx answers are errors.
pub async fn sequential(
    addr: SocketAddr,
    req: &Req,
    warmup: usize,
    count: usize,
) -> Result<Vec<f64>> {
    let mut conn = Conn::new(addr);
    let mut out = Vec::with_capacity(count);
    for i in 0..warmup + count {
        let sent = Instant::now();
        let (status, body) = conn.send(req).await?;
        let ms = sent.elapsed().as_secs_f64() * 1000.0;
        ensure_success(req, status, &body)?;
        if i >= warmup {
            out.push(ms);
        }
    }
    Ok(out)
}

/// Fails with the request and the body when `status` is not 2xx.
fn ensure_success(req: &Req, status: u16, body: &[u8]) -> Result<()> {
    if !(200..300).contains(&status) {
        bail!(
            "{} {} answered {status}: {}",
            req.method,
            req.path,
            String::from_utf8_lossy(body)
        );
    }
    Ok(())
}

/// `tunnel-bench load`: one load run against a running server, printed as JSON.
pub fn load_command(args: crate::LoadArgs) -> Result<()> {
    let make: MakeReq = {
        let (path, key) = (args.path, args.key);
        let body = match (args.post, args.patch) {
            (Some(body), _) => Some((hyper::Method::POST, body)),
            (None, Some(body)) => Some((hyper::Method::PATCH, body)),
            (None, None) => None,
        };
        Arc::new(move |n| match &body {
            Some((method, body)) => {
                let body = body.replace("{n}", &n.to_string());
                Req::with_body(method.clone(), path.clone(), key.as_deref(), body)
            }
            None => Req::get(path.clone(), key.as_deref()),
        })
    };
    let runtime = tokio::runtime::Runtime::new()?;
    let result = runtime.block_on(load(
        args.addr,
        args.connections,
        Duration::from_secs(args.seconds),
        make,
    ))?;
    println!("{}", result.json());
    Ok(())
}
