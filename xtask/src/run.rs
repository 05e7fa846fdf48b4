//! `cargo xtask run`: builds the console with trunk (release) and starts `tunnel-server` on it,
//! with SQLite in `data/` or the PostgreSQL database given by `--database`, printing the URL to
//! open. On PostgreSQL the server needs its key given: without `TUNNEL_SERVER_KEY`, the one in
//! `data/server.key` is used (made on first use), so a local server keeps its key across runs.
//! `--nodes N` starts a cluster behind nginx instead (`nodes`), with the pieces shared here.

use crate::shell::{cmd, done, exec, root, step};
use crate::tools::ensure_build_tools;
use anyhow::{Context, Result};
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

/// `--database` when none is given: a SQLite file in `data/`.
pub const DEFAULT_DATABASE: &str = "sqlite://data/tunnel.db";

/// `trunk build --release` into `dist/`.
pub fn build_console() -> Result<()> {
    exec(cmd("trunk", &["build", "--release"]))
}

/// The build tools, the console (release) and the server (release); the server's binary.
pub fn build() -> Result<PathBuf> {
    ensure_build_tools()?;
    let timer = step("console release build (trunk)");
    build_console()?;
    done(timer);

    let timer = step("server release build");
    exec(cmd("cargo", &["build", "--release", "-p", "tunnel-server"]))?;
    done(timer);
    Ok(root().join("target/release/tunnel-server"))
}

/// Whether `database` is a PostgreSQL URL (else SQLite).
pub fn is_postgres(database: &str) -> bool {
    database.starts_with("postgres://") || database.starts_with("postgresql://")
}

/// `data/`, where the local server keeps its SQLite file and its key (created when missing).
pub fn data_dir() -> Result<PathBuf> {
    let data = root().join("data");
    std::fs::create_dir_all(&data).context("creating data/")?;
    Ok(data)
}

pub fn run(listen: &str, database: &str) -> Result<()> {
    let server = build()?;
    let data = data_dir()?;
    println!("\n==> Tunnel Console: open http://{listen}/ (API at http://{listen}/api)");
    println!("    On the first start the server prints the admin API key to sign in with.\n");
    let mut command = cmd(
        &server.to_string_lossy(),
        &["serve", "--listen", listen, "--console-dir", "dist"],
    );
    // In the environment, not on the command line: the command is printed, and a PostgreSQL
    // URL may hold a password.
    command.env("TUNNEL_DATABASE", database);
    if is_postgres(database) {
        command.env("TUNNEL_SERVER_KEY", server_key(&data)?);
    }
    if std::env::var_os("RUST_LOG").is_none() {
        command.env("RUST_LOG", "info");
    }
    exec(command)
}

/// The server key for PostgreSQL: `TUNNEL_SERVER_KEY` when set, else [`local_server_key`].
pub fn server_key(data: &Path) -> Result<String> {
    match std::env::var("TUNNEL_SERVER_KEY") {
        Ok(key) => Ok(key),
        Err(_) => local_server_key(data),
    }
}

/// The key in `data/server.key`, made (64 random hex digits, mode 0600) when missing.
fn local_server_key(data: &Path) -> Result<String> {
    use std::io::Write as _;
    let path = data.join("server.key");
    if let Ok(key) = std::fs::read_to_string(&path) {
        return Ok(key.trim().to_owned());
    }
    let key = random_hex(32)?;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        .with_context(|| format!("creating {}", path.display()))?;
    file.write_all(key.as_bytes())?;
    println!(
        "    made the server key {} (keep it with the database)",
        path.display()
    );
    Ok(key)
}

/// `n` random bytes from `/dev/urandom` as lowercase hex (keys and secrets).
pub fn random_hex(n: usize) -> Result<String> {
    use std::io::Read as _;
    let mut bytes = vec![0u8; n];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .context("reading /dev/urandom")?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}
