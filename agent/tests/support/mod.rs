//! Test harness of the agent's tests: a real `tunnel-server` application listening on a loopback
//! port (the agent channel goes over that socket), API calls sent to the same application in
//! process, real `tunnel-agent` processes whose stdout lines and exit status the tests read,
//! and a relay that breaks the link on demand. The server's database is in-memory SQLite, or a
//! fresh database of its own on the shared PostgreSQL cluster when the run names one
//! (`TUNNEL_TEST_POSTGRES`, see `tunnel_testkit::postgres`). Every wait is bounded; agent
//! processes are killed when their handle is dropped (tokio's `kill_on_drop`: the agent starts
//! no helpers of its own, so no process group is needed, unlike the browsers of
//! `tunnel-testkit`).
//!
//! Just over 400 lines: the server, the agent and the relay are the three parts of every test
//! here, and each test binary includes this one module.

#![allow(dead_code)] // Each test binary uses a different part of the harness.

use axum::Router;
use axum::body::Body;
use axum::http::header::RETRY_AFTER;
use axum::http::{HeaderMap, Method, Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::net::TcpListener;
use tokio::process::{Child, Command};
use tokio::sync::mpsc;
use tower::ServiceExt;
use tunnel_core::ErrorCode;
use tunnel_server::agents::{Registry, Timings};
use tunnel_server::config::Config;
use tunnel_server::state::AppState;
use tunnel_server::store::DatabaseUrl;
use tunnel_testkit::postgres::{TestDatabase, test_database};

/// Upper bound of every wait in these tests: generous for a loaded 2-core machine.
pub const WAIT: Duration = Duration::from_secs(20);

#[derive(Debug)]
pub struct Server {
    pub state: AppState,
    pub addr: SocketAddr,
    app: Router,
}

impl Server {
    /// A server on the run's database (see the module), `--agent-latest` = `latest`,
    /// `--region` = `region`.
    pub async fn start(latest: &str, region: &str, timings: Timings) -> Server {
        let mut config = Config::in_memory();
        let database = test_database().unwrap();
        if let TestDatabase::Postgres(url) = &database {
            config.database = DatabaseUrl::parse(url).unwrap();
        }
        config.server_key = database.server_key().map(|k| k.parse().unwrap());
        Server::serve(config, latest, region, timings).await
    }

    /// A server on the SQLite file `file` (whatever the run's database), in region `local`,
    /// with an account and a credential of it, as [`Server::with_credential`]: for what only a
    /// database file shared with another process can show.
    pub async fn on_sqlite_file(
        file: &std::path::Path,
        timings: Timings,
    ) -> (Server, String, String) {
        let mut config = Config::in_memory();
        config.database = DatabaseUrl::SqliteFile(file.to_owned());
        Server::serve(config, "3.4.1", "local", timings)
            .await
            .with_account_and_credential()
            .await
    }

    /// Serves `config` on a free loopback port.
    async fn serve(mut config: Config, latest: &str, region: &str, timings: Timings) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        config.listen = addr;
        config.public_url = Config::default_public_url(addr);
        config.region = region.to_owned();
        config.agent_latest = tunnel_core::version::parse_catalogue(latest).unwrap();
        let state = AppState::open(config)
            .await
            .unwrap()
            .with(|parts| parts.registry = Registry::with_timings(timings));
        let app = tunnel_server::app(state.clone());
        let service = app
            .clone()
            .into_make_service_with_connect_info::<SocketAddr>();
        tokio::spawn(async move { axum::serve(listener, service).await.unwrap() });
        Server { state, addr, app }
    }

    /// [`Server::start`] in region `local`, with an account and a credential of it (no ACL):
    /// the server, the account's API key and the credential's authtoken.
    pub async fn with_credential(latest: &str, timings: Timings) -> (Server, String, String) {
        Server::start(latest, "local", timings)
            .await
            .with_account_and_credential()
            .await
    }

    /// This server, with a new account's API key and the authtoken of a credential of it (no
    /// ACL).
    async fn with_account_and_credential(self) -> (Server, String, String) {
        let key = self.account().await;
        let (_, token) = self.credential(&key, &[]).await;
        (self, key, token)
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// A new account with an admin; returns its API key.
    pub async fn account(&self) -> String {
        self.state
            .store
            .create_account("test", "admin")
            .await
            .unwrap()
            .api_key
    }

    /// One API call (in process, through the whole router): status and JSON body (or Null).
    pub async fn call(
        &self,
        method: Method,
        path: &str,
        key: &str,
        body: Option<&str>,
    ) -> (StatusCode, Value) {
        let (status, _, value) = self.call_with_headers(method, path, key, body).await;
        (status, value)
    }

    /// [`Server::call`], with the response's headers too.
    pub async fn call_with_headers(
        &self,
        method: Method,
        path: &str,
        key: &str,
        body: Option<&str>,
    ) -> (StatusCode, HeaderMap, Value) {
        let mut req = Request::builder()
            .method(method)
            .uri(format!("/api{path}"))
            .header("Service-Version", "2")
            .header("Authorization", format!("Bearer {key}"));
        if body.is_some() {
            req = req.header("Content-Type", "application/json");
        }
        let req = req
            .body(body.map_or_else(Body::empty, |b| Body::from(b.to_owned())))
            .unwrap();
        let res = self.app.clone().oneshot(req).await.unwrap();
        let status = res.status();
        let headers = res.headers().clone();
        let bytes = res.into_body().collect().await.unwrap().to_bytes();
        let value = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes).unwrap()
        };
        (status, headers, value)
    }

    pub async fn get(&self, path: &str, key: &str) -> (StatusCode, Value) {
        self.call(Method::GET, path, key, None).await
    }

    /// POST /tunnel_sessions/{id}/{command} with no body.
    pub async fn command(&self, id: &str, command: &str, key: &str) -> (StatusCode, Value) {
        self.call(
            Method::POST,
            &format!("/tunnel_sessions/{id}/{command}"),
            key,
            None,
        )
        .await
    }

    /// Restarts the agent of session `id` after an update, as a client should: a 409 saying the
    /// update is still applied or finished too recently is retried after its `Retry-After`
    /// (bounded by [`WAIT`]). Returns the last answer.
    pub async fn restart_after_update(&self, id: &str, key: &str) -> (StatusCode, Value) {
        let deadline = tokio::time::Instant::now() + WAIT;
        let path = format!("/tunnel_sessions/{id}/restart");
        loop {
            let (status, headers, body) =
                self.call_with_headers(Method::POST, &path, key, None).await;
            let waiting = [ErrorCode::RestartDuringUpdate, ErrorCode::RestartTooSoon]
                .iter()
                .any(|c| body["error_code"] == c.as_str());
            if !waiting {
                return (status, body);
            }
            let secs: u64 = headers[RETRY_AFTER].to_str().unwrap().parse().unwrap();
            assert!(
                tokio::time::Instant::now() < deadline,
                "restart still refused: {body}"
            );
            tokio::time::sleep(Duration::from_secs(secs)).await;
        }
    }

    /// Creates a credential with `acl`; returns its id and authtoken.
    pub async fn credential(&self, key: &str, acl: &[&str]) -> (String, String) {
        let body = json!({ "description": "agent test", "acl": acl }).to_string();
        let (status, value) = self
            .call(Method::POST, "/credentials", key, Some(&body))
            .await;
        assert_eq!(status, StatusCode::CREATED, "{value}");
        (
            value["id"].as_str().unwrap().to_owned(),
            value["token"].as_str().unwrap().to_owned(),
        )
    }

    /// Ids of the account's listed sessions.
    pub async fn session_ids(&self, key: &str) -> Vec<String> {
        let (status, value) = self.get("/tunnel_sessions", key).await;
        assert_eq!(status, StatusCode::OK, "{value}");
        value["tunnel_sessions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["id"].as_str().unwrap().to_owned())
            .collect()
    }

    /// Stops the agent of session `id` through the API (204), then waits for it to exit 0;
    /// returns its stderr.
    pub async fn stop_agent(&self, agent: &mut Agent, id: &str, key: &str) -> String {
        assert_eq!(
            self.command(id, "stop", key).await.0,
            StatusCode::NO_CONTENT
        );
        let (status, stderr) = agent.exit().await;
        assert!(status.success(), "{stderr}");
        stderr
    }

    /// Waits (bounded) until GET of the session shows its `agent_update_state` as `state`. An
    /// agent's report reaches the server after the agent has printed it, so what the agent says
    /// is not yet what the API shows.
    pub async fn wait_update_state(&self, id: &str, key: &str, state: &str) {
        self.wait_session(id, key, &format!("update state {state}"), |_, session| {
            session["agent_update_state"]["state"] == state
        })
        .await;
    }

    /// Waits (bounded) until GET of the session answers `status`.
    pub async fn wait_session_status(&self, id: &str, key: &str, status: StatusCode) {
        self.wait_session(id, key, &format!("status {status}"), |got, _| got == status)
            .await;
    }

    /// Polls GET of the session until `reached` holds for its status and body, at most [`WAIT`]
    /// (`what` names the awaited state in the failure).
    async fn wait_session(
        &self,
        id: &str,
        key: &str,
        what: &str,
        reached: impl Fn(StatusCode, &Value) -> bool,
    ) {
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            let (status, session) = self.get(&format!("/tunnel_sessions/{id}"), key).await;
            if reached(status, &session) {
                return;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "session {id}: not {what} yet ({status}: {session})"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// Fast timings for tests (the agent's own are set by flags/env in `Agent::spawn`): a restart
/// waits 1 s after an update instead of 10 (the 10 s default has its own test).
pub fn fast_timings() -> Timings {
    Timings {
        command_timeout: Duration::from_secs(10),
        heartbeat: Duration::from_secs(5),
        hello_timeout: Duration::from_secs(5),
        update_restart_wait: Duration::from_secs(1),
        ..Timings::default()
    }
}

/// A running `tunnel-agent` process.
#[derive(Debug)]
pub struct Agent {
    child: Child,
    lines: mpsc::UnboundedReceiver<String>,
    stderr: Option<tokio::process::ChildStderr>,
    /// The task reading stdout (holding the pipe's reading end).
    reader: tokio::task::JoinHandle<()>,
    /// Every stdout line seen so far, for failure messages.
    pub seen: Vec<String>,
}

impl Agent {
    /// Starts the agent with the authtoken in `TUNNEL_AUTHTOKEN` (as a careful user would) and
    /// `args`; updates take 2 s, and reconnect delays stay under 0.5 s.
    pub fn spawn(server: &Server, token: &str, args: &[&str]) -> Agent {
        Agent::spawn_to(&server.url(), token, args)
    }

    /// Like `spawn`, to any address (e.g. a `Proxy`).
    pub fn spawn_to(url: &str, token: &str, args: &[&str]) -> Agent {
        Agent::spawn_with_env(url, token, args, &[])
    }

    /// Like `spawn_to`, with extra environment variables (e.g. `SSL_CERT_FILE`).
    pub fn spawn_with_env(url: &str, token: &str, args: &[&str], env: &[(&str, &str)]) -> Agent {
        let mut child = Command::new(env!("CARGO_BIN_EXE_tunnel-agent"))
            .envs(env.iter().copied())
            .arg("--server")
            .arg(url)
            .args(args)
            .env("TUNNEL_AUTHTOKEN", token)
            .env("TUNNEL_AGENT_UPDATE_DURATION_MS", "2000")
            .env("TUNNEL_AGENT_BACKOFF_MAX_MS", "500")
            .env_remove(tunnel_agent::commands::UPDATED_VERSION_ENV)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("start tunnel-agent");
        let stdout = child.stdout.take().unwrap();
        let stderr = child.stderr.take();
        let (tx, lines) = mpsc::unbounded_channel();
        let reader = tokio::spawn(async move {
            let mut reader = BufReader::new(stdout).lines();
            while let Ok(Some(line)) = reader.next_line().await {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Agent {
            child,
            lines,
            stderr,
            reader,
            seen: Vec::new(),
        }
    }

    /// Stops reading the agent's stdout and closes the pipe, as a log reader that went away:
    /// the agent's next line meets a broken pipe.
    pub async fn close_stdout(&mut self) {
        self.reader.abort();
        let _ = (&mut self.reader).await;
    }

    /// Waits (bounded) for a stdout line satisfying `pick`, returning what it extracts.
    pub async fn wait_line<T>(&mut self, what: &str, pick: impl Fn(&str) -> Option<T>) -> T {
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            match tokio::time::timeout_at(deadline, self.lines.recv()).await {
                Ok(Some(line)) => {
                    let found = pick(&line);
                    self.seen.push(line);
                    if let Some(found) = found {
                        return found;
                    }
                }
                Ok(None) => panic!("agent output ended before {what}; saw {:?}", self.seen),
                Err(_) => panic!("timed out waiting for {what}; saw {:?}", self.seen),
            }
        }
    }

    /// Waits for the next `session ts_… opened` line and returns the id.
    pub async fn session(&mut self) -> String {
        self.wait_line("a session", |line| {
            line.strip_prefix("session ")
                .and_then(|rest| rest.strip_suffix(" opened"))
                .map(str::to_owned)
        })
        .await
    }

    /// Waits (bounded) for the process to exit; returns its status and its stderr.
    pub async fn exit(&mut self) -> (ExitStatus, String) {
        let status = match tokio::time::timeout(WAIT, self.child.wait()).await {
            Ok(status) => status.unwrap(),
            Err(_) => {
                // Killed, so that what it said can be read to the end and shown.
                let _ = self.child.kill().await;
                let mut stderr = String::new();
                if let Some(mut pipe) = self.stderr.take() {
                    let _ = tokio::time::timeout(WAIT, pipe.read_to_string(&mut stderr)).await;
                }
                let stdout = self.all_lines().await.join("\n");
                panic!("agent did not exit in {WAIT:?}\nstdout:\n{stdout}\nstderr:\n{stderr}");
            }
        };
        let mut stderr = String::new();
        if let Some(mut pipe) = self.stderr.take() {
            let _ = tokio::time::timeout(WAIT, pipe.read_to_string(&mut stderr)).await;
        }
        (status, stderr)
    }

    /// The stdout lines read so far (by the waits), while the process runs.
    pub fn lines_so_far(&self) -> Vec<String> {
        self.seen.clone()
    }

    /// After the process ended: every stdout line seen, including those not yet waited for.
    pub async fn all_lines(&mut self) -> Vec<String> {
        while let Ok(Some(line)) = tokio::time::timeout(WAIT, self.lines.recv()).await {
            self.seen.push(line);
        }
        self.seen.clone()
    }

    /// Whether the process is still running.
    pub fn running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    /// Kills the process abruptly (no goodbye on the channel).
    pub async fn kill(&mut self) {
        self.child.kill().await.unwrap();
    }
}

/// What the proxy does to the connections open at the time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Close them (both sides see the connection drop).
    Cut,
    /// Keep them open but stop relaying anything (a dead link that says nothing).
    Freeze,
    /// Close them and refuse every later connection (a server node that died).
    Down,
}

/// A loopback TCP relay between agents and the server, to break the link on demand.
/// Connections opened after a fault are relayed normally.
pub struct Proxy {
    pub addr: SocketAddr,
    faults: tokio::sync::watch::Sender<(u64, Fault)>,
}

impl Proxy {
    pub async fn start(target: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (faults, watch) = tokio::sync::watch::channel((0u64, Fault::Cut));
        tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                let mut watch = watch.clone();
                let (born, state) = *watch.borrow_and_update();
                if born > 0 && state == Fault::Down {
                    // A dead node: the connection is closed before anything is relayed.
                    drop(inbound);
                    continue;
                }
                tokio::spawn(async move {
                    let Ok(mut outbound) = tokio::net::TcpStream::connect(target).await else {
                        return;
                    };
                    let fault = tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound) => return,
                        fault = async {
                            loop {
                                if watch.changed().await.is_err() {
                                    return None;
                                }
                                let (generation, fault) = *watch.borrow_and_update();
                                if generation > born {
                                    return Some(fault);
                                }
                            }
                        } => fault,
                    };
                    if fault == Some(Fault::Freeze) {
                        // Hold both sockets open, relaying nothing, until the test ends.
                        tokio::time::sleep(Duration::from_secs(3600)).await;
                    }
                    drop((inbound, outbound));
                });
            }
        });
        Proxy { addr, faults }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Applies `fault` to every connection open now.
    pub fn fault(&self, fault: Fault) {
        self.faults.send_modify(|(generation, f)| {
            *generation += 1;
            *f = fault;
        });
    }
}
