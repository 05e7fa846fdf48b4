//! Real processes for end-to-end tests, each owned by a guard that kills it on drop.

use anyhow::{Context, Result, bail};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// The admin API key of the bootstrap account of every test server (token format of DESIGN §3).
pub const ADMIN_KEY: &str = "e2eAdminKey00000000000000000_e2eSecretSecretSecretSecret0001";

pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ sits in the workspace")
        .to_path_buf()
}

/// A binary of the workspace, built by `cargo xtask test` before the tests run.
pub fn binary(name: &str) -> Result<PathBuf> {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("target"));
    let path = target.join("debug").join(name);
    if !path.exists() {
        bail!(
            "{} is missing: build it first (`cargo build -p {name}`, done by `cargo xtask test`)",
            path.display()
        );
    }
    Ok(path)
}

/// A free port on 127.0.0.1 (the listener is closed before the port is handed out).
pub fn free_port() -> Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// Waits (bounded) until something accepts connections on `addr`.
pub fn wait_for_port(addr: SocketAddr, what: &str, child: &mut Child) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
            return Ok(());
        }
        if let Some(status) = child.try_wait()? {
            bail!("{what} exited before listening: {status}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    bail!("{what} did not listen on {addr} within 30 s")
}

/// A child process killed, with its whole process group, on drop.
#[derive(Debug)]
pub struct ProcessGuard {
    child: Child,
    name: String,
}

impl ProcessGuard {
    /// Starts `command` in its own process group, so helpers it spawns (Chromium) die with it.
    pub fn spawn(name: &str, mut command: Command) -> Result<ProcessGuard> {
        command.process_group(0);
        let child = command
            .spawn()
            .with_context(|| format!("starting {name}"))?;
        Ok(ProcessGuard {
            child,
            name: name.to_owned(),
        })
    }

    pub fn child(&mut self) -> &mut Child {
        &mut self.child
    }

    /// Waits up to `timeout` for the process to exit by itself.
    pub fn wait_exit(&mut self, timeout: Duration) -> Result<ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.child.try_wait()? {
                return Ok(status);
            }
            if Instant::now() >= deadline {
                bail!("{} did not exit within {timeout:?}", self.name);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for ProcessGuard {
    fn drop(&mut self) {
        self.kill();
    }
}

impl ProcessGuard {
    /// Kills the process and its group now (also done on drop).
    pub fn kill(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            // The group id is the child's pid (process_group(0)). A signal call, not the `kill`
            // command: procps' `kill -KILL -<pgid>` reads the group as `-1` and kills everything.
            if let Ok(pid) = i32::try_from(self.child.id()) {
                let _ = nix::sys::signal::killpg(
                    nix::unistd::Pid::from_raw(pid),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

/// A `tunnel-server` on a free loopback port with a temporary SQLite database, serving the
/// release console from `dist/`.
#[derive(Debug)]
pub struct Server {
    pub addr: SocketAddr,
    process: ProcessGuard,
    _data: tempfile::TempDir,
}

impl Server {
    pub fn start(extra_args: &[&str]) -> Result<Server> {
        let data = tempfile::tempdir()?;
        let port = free_port()?;
        let addr: SocketAddr = format!("127.0.0.1:{port}").parse()?;
        let console = workspace_root().join("dist");
        if !console.join("index.html").exists() {
            bail!(
                "the console is not built: run `trunk build --release` (done by `cargo xtask test`)"
            );
        }
        let database = format!("sqlite://{}", data.path().join("tunnel.db").display());
        let mut command = Command::new(binary("tunnel-server")?);
        command
            .args([
                "serve",
                "--listen",
                &addr.to_string(),
                "--database",
                &database,
            ])
            .arg("--console-dir")
            .arg(&console)
            .args(extra_args)
            .env("TUNNEL_BOOTSTRAP_API_KEY", ADMIN_KEY)
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null());
        let mut process = ProcessGuard::spawn("tunnel-server", command)?;
        wait_for_port(addr, "tunnel-server", process.child())?;
        Ok(Server {
            addr,
            process,
            _data: data,
        })
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn api_url(&self) -> String {
        format!("http://{}/api", self.addr)
    }

    /// Kills the server (the database stays), as a crash or an outage would.
    pub fn stop(&mut self) {
        self.process.kill();
    }

    pub fn is_running(&mut self) -> bool {
        matches!(self.process.child().try_wait(), Ok(None))
    }
}

/// A `tunnel-agent` connected to a server.
#[derive(Debug)]
pub struct Agent {
    pub process: ProcessGuard,
}

impl Agent {
    /// Starts an agent with `token` (passed by environment, not on the command line).
    pub fn start(server: &Server, token: &str, args: &[&str]) -> Result<Agent> {
        let mut command = Command::new(binary("tunnel-agent")?);
        command
            .args(["--server", &server.url()])
            .args(args)
            .env("TUNNEL_AUTHTOKEN", token)
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        Ok(Agent {
            process: ProcessGuard::spawn("tunnel-agent", command)?,
        })
    }
}

/// chromedriver + headless Chromium, driven through fantoccini. Dropping kills both.
pub struct Browser {
    pub client: fantoccini::Client,
    _driver: ProcessGuard,
    _profile: tempfile::TempDir,
}

impl std::fmt::Debug for Browser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Browser")
    }
}

impl Browser {
    pub async fn start() -> Result<Browser> {
        let port = free_port()?;
        let mut command = Command::new("/usr/bin/chromedriver");
        command
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let mut driver = ProcessGuard::spawn("chromedriver", command)?;
        wait_for_port(
            format!("127.0.0.1:{port}").parse()?,
            "chromedriver",
            driver.child(),
        )?;
        let profile = tempfile::tempdir()?;
        let args = [
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--disable-quic",
            "--window-size=1280,900",
        ]
        .into_iter()
        .map(str::to_owned)
        .chain([format!("--user-data-dir={}", profile.path().display())])
        .collect::<Vec<_>>();
        let mut caps = serde_json::Map::new();
        caps.insert(
            "goog:chromeOptions".into(),
            serde_json::json!({"binary": "/usr/bin/chromium", "args": args}),
        );
        let connector = hyper_util::client::legacy::connect::HttpConnector::new();
        let client = fantoccini::ClientBuilder::new(connector)
            .capabilities(caps)
            .connect(&format!("http://127.0.0.1:{port}"))
            .await
            .context("connecting to chromedriver")?;
        Ok(Browser {
            client,
            _driver: driver,
            _profile: profile,
        })
    }

    /// Saves a screenshot under `target/e2e-screenshots/<name>.png`.
    pub async fn screenshot(&self, name: &str) -> Result<PathBuf> {
        let dir = workspace_root().join("target/e2e-screenshots");
        std::fs::create_dir_all(&dir)?;
        let path = dir.join(format!("{name}.png"));
        std::fs::write(&path, self.client.screenshot().await?)?;
        Ok(path)
    }
}
