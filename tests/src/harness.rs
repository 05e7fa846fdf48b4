//! Real processes for end-to-end tests, each owned by a guard that kills it (and its process
//! group) on drop: the server, agents, and chromedriver with headless Chromium. The guard and
//! the browser launch come from `tunnel-testkit`, shared with the benchmarks.

use crate::api::Api;
use crate::pages::sign_in::sign_in;
use anyhow::{Context as _, Result, bail};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;
use tunnel_testkit::browser::Chromedriver;
use tunnel_testkit::postgres::test_database;
use tunnel_testkit::process::serve_command;
pub use tunnel_testkit::process::{ProcessGuard, free_port};

/// The admin API key of the bootstrap account of every test server (token format of
/// `docs/ids.md`).
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

/// The server flag that lets webhooks go to loopback and private addresses, so a flow can run
/// its own receiver ([`WebhookReceiver`]) on 127.0.0.1; servers refuse such URLs otherwise.
pub const ALLOW_PRIVATE_WEBHOOKS: &str = "--allow-private-webhooks";

/// A webhook receiver on a free loopback port, in the test's own runtime: it answers every
/// `POST /hook` with 200 and `ok`, and keeps the bodies it received.
#[derive(Debug)]
pub struct WebhookReceiver {
    pub addr: SocketAddr,
    pub received: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    task: tokio::task::JoinHandle<()>,
}

impl WebhookReceiver {
    pub async fn start() -> Result<WebhookReceiver> {
        use axum::routing::post;
        let received = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let store = received.clone();
        let app = axum::Router::new().route(
            "/hook",
            post(move |body: String| async move {
                store.lock().expect("receiver lock").push(body);
                "ok"
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(WebhookReceiver {
            addr,
            received,
            task,
        })
    }

    /// The URL to give a webhook destination.
    pub fn url(&self) -> String {
        format!("http://{}/hook", self.addr)
    }

    /// The bodies received so far.
    pub fn bodies(&self) -> Vec<String> {
        self.received.lock().expect("receiver lock").clone()
    }
}

impl Drop for WebhookReceiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// How long a started program may take to listen on its port.
const START: Duration = Duration::from_secs(30);
/// How many ports a server is started on before its failure to listen is reported.
const BIND_ATTEMPTS: u32 = 3;

/// A `tunnel-server` on a free loopback port with a temporary SQLite database (or, when the run
/// names a shared PostgreSQL cluster with `TUNNEL_TEST_POSTGRES`, a fresh database of its own on
/// it), serving the release console from `dist/`.
#[derive(Debug)]
pub struct Server {
    pub addr: SocketAddr,
    /// The database URL, for the operator commands a test runs beside the server.
    database: String,
    process: ProcessGuard,
    _data: tempfile::TempDir,
}

impl Server {
    pub fn start(extra_args: &[&str]) -> Result<Server> {
        let data = tempfile::tempdir()?;
        let mut addr: SocketAddr = format!("127.0.0.1:{}", free_port()?).parse()?;
        let console = workspace_root().join("dist");
        if !console.join("index.html").exists() {
            bail!(
                "the console is not built: run `trunk build --release` (done by `cargo xtask test`)"
            );
        }
        let database = test_database()?;
        let url = database.url_or(format!(
            "sqlite://{}",
            data.path().join("tunnel.db").display()
        ));
        // The port is free when picked but may be taken before the server binds it (by another
        // test's process, or as the local port of an outgoing connection): a server that exits
        // before listening gets a new port, a few times.
        let mut attempt = 1;
        let (addr, process) = loop {
            let mut command = serve_command(&binary("tunnel-server")?, addr, &url);
            command
                .arg("--console-dir")
                .arg(&console)
                .args(extra_args)
                .env("TUNNEL_BOOTSTRAP_API_KEY", ADMIN_KEY);
            if let Some(key) = database.server_key() {
                command.env("TUNNEL_SERVER_KEY", key);
            }
            let mut process = ProcessGuard::spawn("tunnel-server", command)?;
            match process.wait_for_port(addr, START) {
                // Listening, and ours: a server that lost the port has exited by now.
                Ok(()) if process.is_running() => break (addr, process),
                Ok(()) | Err(_) if attempt < BIND_ATTEMPTS && !process.is_running() => {
                    attempt += 1;
                    addr = format!("127.0.0.1:{}", free_port()?).parse()?;
                }
                Ok(()) => bail!("tunnel-server exited right after starting"),
                Err(e) => return Err(e),
            }
        };
        Ok(Server {
            addr,
            database: url,
            process,
            _data: data,
        })
    }

    /// A new member (a user, not an admin) of `account`, without a name: see [`Server::user`].
    pub fn member(&self, account: &str) -> Result<(String, String)> {
        self.user(account, "", false)
    }

    /// A new member (a user, or a bot when `bot`) of `account` named `name`, made with the
    /// operator command `tunnel-server user create` on the server's database while it runs:
    /// `(user_id, api_key)`.
    pub fn user(&self, account: &str, name: &str, bot: bool) -> Result<(String, String)> {
        let output = Command::new(binary("tunnel-server")?)
            .args(["user", "create", "--account", account, "--name", name])
            .args(bot.then_some("--bot"))
            .arg("--database")
            .arg(&self.database)
            .stdin(Stdio::null())
            .output()?;
        if !output.status.success() {
            bail!(
                "tunnel-server user create failed: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
        let created: serde_json::Value = serde_json::from_slice(&output.stdout)?;
        let field = |name: &str| {
            created[name]
                .as_str()
                .map(str::to_owned)
                .with_context(|| format!("no {name} in {created}"))
        };
        Ok((field("user_id")?, field("api_key")?))
    }

    /// Makes the user or bot `id` an admin or a member (`tunnel-server user role`).
    pub fn role(&self, id: &str, admin: bool) -> Result<()> {
        let role = if admin { "admin" } else { "member" };
        let output = Command::new(binary("tunnel-server")?)
            .args(["user", "role", "--id", id, "--role", role, "--database"])
            .arg(&self.database)
            .stdin(Stdio::null())
            .output()?;
        if !output.status.success() {
            bail!(
                "tunnel-server user role failed: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
        Ok(())
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
        self.process.is_running()
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

/// What every flow starts with: a server and an API client as its admin (to set up data and to
/// check what the console did). The browser comes signed in from [`Stack::signed_in_browser`],
/// once the test has set up its data, or together with the rest from [`Stack::signed_in`].
#[derive(Debug)]
pub struct Stack {
    pub server: Server,
    pub api: Api,
}

impl Stack {
    /// A server started with `server_args` and the admin's API client.
    pub fn start(server_args: &[&str]) -> Result<Stack> {
        let server = Server::start(server_args)?;
        let api = Api::new(&server.api_url(), ADMIN_KEY);
        Ok(Stack { server, api })
    }

    /// [`Stack::start`], then a browser signed in to the console.
    pub async fn signed_in(server_args: &[&str]) -> Result<(Stack, Browser)> {
        let stack = Stack::start(server_args)?;
        let browser = stack.signed_in_browser().await?;
        Ok((stack, browser))
    }

    /// A browser with the console open and signed in as the admin.
    pub async fn signed_in_browser(&self) -> Result<Browser> {
        let browser = Browser::start().await?;
        sign_in(&browser.client, &self.server.url(), ADMIN_KEY).await?;
        Ok(browser)
    }
}

/// chromedriver + headless Chromium (the flags of `tunnel_testkit::browser`), driven through
/// fantoccini. Dropping kills both.
pub struct Browser {
    pub client: fantoccini::Client,
    // Dropped in this order: the driver (and its Chromium) before the profile directory.
    _driver: Chromedriver,
    _profile: tempfile::TempDir,
}

impl std::fmt::Debug for Browser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Browser")
    }
}

impl Browser {
    pub async fn start() -> Result<Browser> {
        Browser::launch(false).await
    }

    /// [`Browser::start`] with the browser's console kept for `tunnel_testkit::browser::browser_log`.
    pub async fn start_logged() -> Result<Browser> {
        Browser::launch(true).await
    }

    async fn launch(console_log: bool) -> Result<Browser> {
        let driver = Chromedriver::start()?;
        let session = if console_log {
            driver.logged_session(&[]).await?
        } else {
            driver.session(&[]).await?
        };
        Ok(Browser {
            client: session.client,
            _profile: session.profile,
            _driver: driver,
        })
    }

    /// Ends the WebDriver session (the processes go when the `Browser` is dropped).
    pub async fn close(&self) -> Result<()> {
        self.client.clone().close().await?;
        Ok(())
    }

    /// The directory the browser downloads into (exports).
    pub fn downloads(&self) -> PathBuf {
        self._profile
            .path()
            .join(tunnel_testkit::browser::DOWNLOADS)
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
