//! `cargo xtask run`: builds the console with trunk (release) and starts `tunnel-server` on it,
//! with SQLite in `data/`, printing the URL to open.

use crate::shell::{cmd, done, exec, root, step};
use crate::tools::ensure_build_tools;
use anyhow::{Context, Result};

/// `trunk build --release` into `dist/`.
pub fn build_console() -> Result<()> {
    exec(cmd("trunk", &["build", "--release"]))
}

pub fn run(listen: &str) -> Result<()> {
    ensure_build_tools()?;
    let timer = step("console release build (trunk)");
    build_console()?;
    done(timer);

    let timer = step("server release build");
    exec(cmd("cargo", &["build", "--release", "-p", "tunnel-server"]))?;
    done(timer);

    let data = root().join("data");
    std::fs::create_dir_all(&data).context("creating data/")?;
    println!("\n==> Tunnel Console: open http://{listen}/ (API at http://{listen}/api)");
    println!("    On the first start the server prints the admin API key to sign in with.\n");
    let server = root().join("target/release/tunnel-server");
    let mut command = cmd(
        &server.to_string_lossy(),
        &[
            "serve",
            "--listen",
            listen,
            "--database",
            "sqlite://data/tunnel.db",
            "--console-dir",
            "dist",
        ],
    );
    if std::env::var_os("RUST_LOG").is_none() {
        command.env("RUST_LOG", "info");
    }
    exec(command)
}
