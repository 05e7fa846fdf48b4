//! `cargo xtask run`: builds the console with trunk (release) and starts `tunnel-server` on it,
//! with SQLite in `data/` or the PostgreSQL database given by `--database`, printing the URL to
//! open. On PostgreSQL the server needs its key given: without `TUNNEL_SERVER_KEY`, the one in
//! `data/server.key` is used (made on first use), so a local server keeps its key across runs.
//! `--nodes N` starts a cluster behind nginx instead (`nodes`), with the pieces shared here.

use crate::shell::{cmd, done, exec, exec_replace, root, step};
use crate::tools::ensure_build_tools;
use anyhow::{Context, Result};
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

/// `--database` when none is given: a SQLite file in `data/`.
pub const DEFAULT_DATABASE: &str = "sqlite://data/tunnel.db";

/// `trunk build --release` into `dist/`, compressed ([`build_console_into`]).
pub fn build_console() -> Result<()> {
    build_console_into(&root().join("dist"))
}

/// `trunk build --release` into `dist`, then each of its files compressed beside itself
/// ([`precompress`]), so the server sends them as they are instead of compressing on each
/// request (docs/console.md, how the console is served).
pub fn build_console_into(dist: &Path) -> Result<()> {
    let dist_arg = dist.to_string_lossy().into_owned();
    exec(cmd("trunk", &["build", "--release", "--dist", &dist_arg]))?;
    precompress(dist)
}

/// The file types a browser gets from the console's directory that compress.
const COMPRESSIBLE: [&str; 6] = ["html", "js", "css", "wasm", "svg", "json"];

/// Writes `<file>.br` (brotli, quality 11, the largest window) and `<file>.gz` (gzip, level 9)
/// next to every compressible file of `dist` (trunk empties `dist` on each build, so none is
/// stale), leaving out a variant that would not be smaller.
pub fn precompress(dist: &Path) -> Result<()> {
    use std::io::Write as _;
    for entry in std::fs::read_dir(dist)? {
        let path = entry?.path();
        let compressible = path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| COMPRESSIBLE.contains(&e));
        if !path.is_file() || !compressible {
            continue;
        }
        let raw = std::fs::read(&path)?;
        let mut br = Vec::new();
        {
            let params = brotli::enc::BrotliEncoderParams {
                quality: 11,
                lgwin: 24,
                ..Default::default()
            };
            brotli::BrotliCompress(&mut raw.as_slice(), &mut br, &params)?;
        }
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        gz.write_all(&raw)?;
        let gz = gz.finish()?;
        for (bytes, ext) in [(br, "br"), (gz, "gz")] {
            let mut name = path.as_os_str().to_owned();
            name.push(format!(".{ext}"));
            if bytes.len() < raw.len() {
                std::fs::write(&name, bytes)?;
            }
        }
    }
    Ok(())
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
    // The server takes this process's place, as the xtask took cargo's (`cargo run` execs on
    // Unix), so stopping `cargo xtask run` in any way stops the server and frees the port.
    exec_replace(command)
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

#[cfg(test)]
mod tests {
    use super::precompress;
    use std::io::Read as _;

    #[test]
    fn compressed_files_hold_the_original_and_only_when_smaller() {
        let dir = tempfile::tempdir().unwrap();
        let text = "fn main() { println!(\"console\"); }\n".repeat(200);
        std::fs::write(dir.path().join("app.js"), &text).unwrap();
        // Too small to shrink, and a type that is never compressed.
        std::fs::write(dir.path().join("tiny.css"), "a{}").unwrap();
        std::fs::write(dir.path().join("logo.png"), &text).unwrap();
        precompress(dir.path()).unwrap();

        let mut from_br = Vec::new();
        brotli::BrotliDecompress(
            &mut std::fs::File::open(dir.path().join("app.js.br")).unwrap(),
            &mut from_br,
        )
        .unwrap();
        assert_eq!(from_br, text.as_bytes());
        let mut from_gz = String::new();
        flate2::read::GzDecoder::new(std::fs::File::open(dir.path().join("app.js.gz")).unwrap())
            .read_to_string(&mut from_gz)
            .unwrap();
        assert_eq!(from_gz, text);
        for absent in ["tiny.css.br", "tiny.css.gz", "logo.png.br", "logo.png.gz"] {
            assert!(!dir.path().join(absent).exists(), "{absent}");
        }
    }
}
