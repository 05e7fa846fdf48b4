//! Tests over real files, processes and sockets: persistence on a file database
//! (`persistence`), the operator CLI and `serve` as real processes (`processes`,
//! `docs/command-line.md`), the API over a real TCP connection (`socket`) and driven by the
//! official client library (`official_client`), and the rate limits (`rate_limits`). One test binary;
//! the helpers below read the database files.

#[path = "../common/mod.rs"]
mod common;

mod official_client;
mod persistence;
mod postgres;
mod processes;
mod rate_limits;
mod socket;

use std::net::SocketAddr;
use tunnel_server::config::Config;
use tunnel_server::state::AppState;
use tunnel_server::store::DatabaseUrl;

/// A router of the server (`tunnel_server::app`, or `api_alone`) on a free loopback port,
/// served with the peer's address as `serve` serves it, on an in-memory configuration changed
/// by `adjust`. The address, the state, and the serving task.
pub async fn on_socket(
    adjust: impl FnOnce(&mut Config),
    router: impl FnOnce(AppState) -> axum::Router,
) -> (SocketAddr, AppState, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let mut config = Config::in_memory();
    config.listen = addr;
    config.public_url = Config::default_public_url(addr);
    adjust(&mut config);
    let state = AppState::open(config).await.unwrap();
    let app = router(state.clone());
    let task = tokio::spawn(async move {
        axum::serve(
            listener,
            app.into_make_service_with_connect_info::<SocketAddr>(),
        )
        .await
        .unwrap();
    });
    (addr, state, task)
}

pub fn file_config(dir: &std::path::Path) -> Config {
    let mut config = Config::in_memory();
    config.database = DatabaseUrl::SqliteFile(dir.join("tunnel.db"));
    config
}

/// Every byte of the database files (main file, WAL, shared memory).
///
/// The last connection's close checkpoints the WAL and removes the `-wal` and `-shm` files,
/// possibly just after the pool reports closed; a file that vanishes mid-read means the files
/// were changing, so the whole read starts over (bounded) to get one consistent picture.
pub fn database_bytes(dir: &std::path::Path) -> Vec<u8> {
    'attempt: for _ in 0..100 {
        let mut all = Vec::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if !name.starts_with("tunnel.db") {
                continue;
            }
            match std::fs::read(&path) {
                Ok(bytes) => all.extend(bytes),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                    continue 'attempt;
                }
                Err(e) => panic!("reading {name}: {e}"),
            }
        }
        return all;
    }
    panic!("the database files kept changing for 2 s after the store was closed")
}

pub fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

/// The headers of an API call with a JSON body, `auth` being `Bearer <API key>`.
pub fn api_headers(auth: &str) -> [(&str, &str); 3] {
    [
        ("Authorization", auth),
        ("Service-Version", "2"),
        ("Content-Type", "application/json"),
    ]
}
