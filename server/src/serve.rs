//! The loop of the server's HTTP listeners (the main one and `--api-listen`): axum routers
//! served by hyper over HTTP/1.1 with WebSocket upgrades, as `axum::serve` does, plus two bounds
//! that `axum::serve` has no way to set:
//! - reading a request's head takes at most [`HEADER_READ`]: a client that opens a connection
//!   and never finishes a request (slowly, or not at all) does not hold it for good;
//! - at shutdown the server waits at most [`DRAIN`] for the requests still running, and not at
//!   all once a second Ctrl-C or SIGTERM comes: a stalled client cannot keep it from stopping.

use axum::Router;
use axum::extract::ConnectInfo;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use std::future::Future;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tower::ServiceExt as _;

/// How long a client may take to send a request's head (its request line and headers).
pub const HEADER_READ: Duration = Duration::from_secs(30);

/// How long a stop waits for the requests still running (a slow key generation takes seconds).
pub const DRAIN: Duration = Duration::from_secs(60);

/// Serves `router` on `listener` until `stop` completes, then lets the connections finish what
/// they are doing (each closes once idle) for at most [`DRAIN`], or until a second signal.
/// Handlers see the peer's address as `ConnectInfo<SocketAddr>`. With `nodelay`, no Nagle on
/// the connections: the agent channel sends small frames back to back, and with Nagle each
/// waited for the peer's delayed ACK, up to 40 ms (`cargo xtask bench`).
pub async fn run(
    listener: TcpListener,
    router: Router,
    stop: impl Future<Output = ()>,
    nodelay: bool,
) {
    // Each connection holds a receiver of `open`; the drain waits for them all to be dropped.
    let (open, open_rx) = watch::channel(());
    // Dropped at the stop: each connection then shuts down gracefully.
    let (stopping, stopping_rx) = watch::channel(());
    let mut stop = std::pin::pin!(stop);
    loop {
        let (tcp, peer) = tokio::select! {
            () = &mut stop => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                // As `axum::serve`: a connection that failed on its own way in is no matter;
                // anything else (out of file descriptors) is said, and waited out rather than
                // spun on.
                Err(e) if matches!(
                    e.kind(),
                    std::io::ErrorKind::ConnectionRefused
                        | std::io::ErrorKind::ConnectionAborted
                        | std::io::ErrorKind::ConnectionReset
                ) => continue,
                Err(e) => {
                    tracing::error!("cannot accept connections: {e}");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    continue;
                }
            },
        };
        if nodelay && let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!("cannot set TCP_NODELAY: {e}");
        }
        let service = router.clone().map_request(
            move |mut request: axum::extract::Request<hyper::body::Incoming>| {
                request.extensions_mut().insert(ConnectInfo(peer));
                request.map(axum::body::Body::new)
            },
        );
        tokio::spawn(connection(
            tcp,
            TowerToHyperService::new(service),
            stopping_rx.clone(),
            open_rx.clone(),
        ));
    }
    drop((listener, open_rx, stopping_rx));
    // Every connection is told to finish (dropping the sender wakes their receivers).
    drop(stopping);
    let left = open.receiver_count();
    if left == 0 {
        return;
    }
    tracing::debug!(connections = left, "waiting for the requests still running");
    tokio::select! {
        () = open.closed() => {}
        () = tokio::time::sleep(DRAIN) => tracing::warn!(
            connections = open.receiver_count(),
            "stopping without the connections still open after {} s",
            DRAIN.as_secs()
        ),
        () = signals(2) => tracing::warn!(
            connections = open.receiver_count(),
            "stopping at once, without the connections still open"
        ),
    }
}

/// One connection, served until it closes, shut down gracefully once `stopping` is dropped.
/// `open` is held until the connection has ended.
async fn connection<S>(
    tcp: tokio::net::TcpStream,
    service: TowerToHyperService<S>,
    mut stopping: watch::Receiver<()>,
    open: watch::Receiver<()>,
) where
    S: tower::Service<
            axum::extract::Request<hyper::body::Incoming>,
            Response = axum::response::Response,
            Error = std::convert::Infallible,
        > + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
{
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ);
    let conn = builder
        .serve_connection(TokioIo::new(tcp), service)
        .with_upgrades();
    let mut conn = std::pin::pin!(conn);
    let mut told = false;
    loop {
        tokio::select! {
            result = conn.as_mut() => {
                if let Err(e) = result {
                    tracing::trace!("connection ended: {e}");
                }
                break;
            }
            // `changed` fails once the sender is gone: the server is stopping.
            _ = stopping.changed(), if !told => {
                told = true;
                conn.as_mut().graceful_shutdown();
            }
        }
    }
    drop(open);
}

/// Waits until the process has had `n` Ctrl-C or SIGTERM signals in all since the server
/// started (the first stops it, a second cuts its waits). One task counts them all, from
/// handlers made once, so a signal that comes while the first one is handled (leaving the
/// cluster) is not lost.
pub async fn signals(n: u32) {
    static COUNT: std::sync::OnceLock<watch::Sender<u32>> = std::sync::OnceLock::new();
    let count = COUNT.get_or_init(|| {
        let (count, _) = watch::channel(0);
        tokio::spawn(count_signals(count.clone()));
        count
    });
    let mut seen = count.subscribe();
    let _ = seen.wait_for(|seen| *seen >= n).await;
}

/// Adds one to `count` at each Ctrl-C or SIGTERM.
async fn count_signals(count: watch::Sender<u32>) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let (mut interrupt, mut terminate) = (
            signal(SignalKind::interrupt()).ok(),
            signal(SignalKind::terminate()).ok(),
        );
        loop {
            tokio::select! {
                Some(_) = async { interrupt.as_mut()?.recv().await } => {}
                Some(_) = async { terminate.as_mut()?.recv().await } => {}
                else => return,
            }
            count.send_modify(|n| *n += 1);
        }
    }
    #[cfg(not(unix))]
    loop {
        if tokio::signal::ctrl_c().await.is_err() {
            return;
        }
        count.send_modify(|n| *n += 1);
    }
}
