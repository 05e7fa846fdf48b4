//! A cluster (docs/cluster.md): several `tunnel-server` processes on one real PostgreSQL
//! database behave as one server. Agents are real `tunnel-agent` processes, and a node is killed
//! with SIGKILL as a crash would.
//!
//! - A session held by node A is listed by every node and commanded through node B with the
//!   single-node answers (409 with the agent's refusal, 204, 404).
//! - Two nodes commanding one session at the same moment: exactly one stop is accepted.
//! - A credential deleted, or its ACL narrowed, through node B closes the sessions node A holds.
//! - An API key deleted through node A is refused by node B from the delete's answer on, though
//!   B had just authenticated it (and keeps the keys it authenticated for a few seconds).
//! - Node A killed: its session leaves every list within the lease (15 s), the ended event is
//!   recorded once, and the agent, given both nodes, comes back through node B.
//! - Node A stopped cleanly: its session leaves every list at once, and its agent, told with a
//!   Close frame before A exits, comes back through node B.
//! - Webhook deliveries run on every node, and no event is sent twice.
//! - A node alone keeps the rows it read (a change made behind its back is not seen at once);
//!   once a second node joins, the first keeps none (every change, through the second node or
//!   behind both, is read at once), and once the second has stopped, the first keeps rows
//!   again within a heartbeat.
//!
//! The PostgreSQL is the run's shared cluster when `TUNNEL_TEST_POSTGRES` is set (the
//! PostgreSQL pass of `cargo xtask test`), else one started for the test.

use anyhow::{Context as _, Result, bail};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use tunnel_e2e::api::{Api, id};
use tunnel_e2e::harness::{
    ADMIN_KEY, ProcessGuard, WebhookReceiver, binary, free_port, workspace_root,
};
use tunnel_testkit::postgres::{
    Cluster, TEST_SERVER_KEY, fresh_database, query, shared_or_own_cluster,
};

/// The secret the nodes of every test authenticate each other with.
const CLUSTER_SECRET: &str = "c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1";
/// The lease of a node (the server's default): a dead node's sessions leave every list within it.
const LEASE: Duration = Duration::from_secs(15);

/// One database on PostgreSQL, with the cluster it lives on when the test started it.
struct Database {
    url: String,
    _own: Option<Cluster>,
}

impl Database {
    fn new() -> Result<Database> {
        let (own, admin) = shared_or_own_cluster()?;
        Ok(Database {
            url: fresh_database(&admin)?,
            _own: own,
        })
    }
}

/// One node: a `tunnel-server` process on a free loopback port.
struct Node {
    addr: SocketAddr,
    process: ProcessGuard,
    api: Api,
}

impl Node {
    async fn start(database: &Database, name: &str, extra: &[(&str, &str)]) -> Result<Node> {
        Node::start_to(database, name, extra, Stdio::inherit()).await
    }

    /// [`Node::start`], what it logs going to `stderr`.
    async fn start_to(
        database: &Database,
        name: &str,
        extra: &[(&str, &str)],
        stderr: Stdio,
    ) -> Result<Node> {
        let addr: SocketAddr = format!("127.0.0.1:{}", free_port()?).parse()?;
        let mut command = Command::new(binary("tunnel-server")?);
        command
            .args(["serve", "--listen", &addr.to_string()])
            .env("TUNNEL_DATABASE", &database.url)
            .env("TUNNEL_SERVER_KEY", TEST_SERVER_KEY)
            .env("TUNNEL_BOOTSTRAP_API_KEY", ADMIN_KEY)
            .env("TUNNEL_NODE_ID", name)
            .env("TUNNEL_CLUSTER_SECRET", CLUSTER_SECRET)
            .env("TUNNEL_CONSOLE_DIR", workspace_root().join("dist"))
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(stderr);
        for (key, value) in extra {
            command.env(key, value);
        }
        let mut process = ProcessGuard::spawn(name, command)?;
        process.wait_for_port(addr, Duration::from_secs(30))?;
        let api = Api::new(&format!("http://{addr}/api"), ADMIN_KEY);
        // Listening comes before the bootstrap key is in: wait until the API answers with it.
        wait_for(name, Duration::from_secs(20), || async {
            Ok((api.get("/credentials").await?.0 == 200).then_some(()))
        })
        .await?;
        Ok(Node { addr, process, api })
    }

    fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    async fn sessions(&self) -> Result<Vec<String>> {
        self.api.ids("/tunnel_sessions", "tunnel_sessions").await
    }

    async fn command(&self, session: &str, command: &str) -> Result<(u16, Value)> {
        self.api
            .post(&format!("/tunnel_sessions/{session}/{command}"), json!({}))
            .await
    }
}

/// Polls `check` every 50 ms until it gives a value, for at most `within`.
async fn wait_for<T, F, Fut>(what: &str, within: Duration, mut check: F) -> Result<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<Option<T>>>,
{
    let deadline = Instant::now() + within;
    loop {
        if let Some(value) = check().await? {
            return Ok(value);
        }
        if Instant::now() > deadline {
            bail!("{what}: not within {within:?}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A `tunnel-agent` with `token`, given `servers` in order, binding `binds`.
fn agent(servers: &[&Node], token: &str, binds: &[&str]) -> Result<ProcessGuard> {
    agent_to(servers, token, binds, Stdio::null())
}

/// [`agent`], what it prints going to `out`.
fn agent_to(servers: &[&Node], token: &str, binds: &[&str], out: Stdio) -> Result<ProcessGuard> {
    let mut command = Command::new(binary("tunnel-agent")?);
    for server in servers {
        command.args(["--server", &server.url()]);
    }
    for bind in binds {
        command.args(["--bind", bind]);
    }
    command
        .env("TUNNEL_AUTHTOKEN", token)
        .stdout(out)
        .stderr(Stdio::null());
    ProcessGuard::spawn("tunnel-agent", command)
}

/// A new credential (with `acl`) created through `node`: its id and token.
async fn credential(node: &Node, acl: &[&str]) -> Result<(String, String)> {
    let created = node
        .api
        .create("/credentials", json!({ "acl": acl }))
        .await?;
    let token = created["token"].as_str().unwrap_or_default().to_owned();
    Ok((id(&created), token))
}

/// Waits until every node lists exactly one session, the same, other than `previous`.
async fn one_session_everywhere(nodes: &[&Node], previous: Option<&str>) -> Result<String> {
    wait_for(
        "one session on every node",
        Duration::from_secs(20),
        || async {
            let mut seen = Vec::new();
            for node in nodes {
                seen.push(node.sessions().await?);
            }
            Ok(match seen.first().map(Vec::as_slice) {
                Some([only])
                    if Some(only.as_str()) != previous && seen.iter().all(|s| s == &seen[0]) =>
                {
                    Some(only.clone())
                }
                _ => None,
            })
        },
    )
    .await
}

/// The types of the events of `object_id`, oldest first.
async fn event_types(node: &Node, object_id: &str) -> Result<Vec<String>> {
    let (status, page) = node.api.get("/events?limit=100").await?;
    anyhow::ensure!(status == 200, "events: {page}");
    let mut types: Vec<String> = page["events"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["object_id"] == object_id)
        .map(|e| e["type"].as_str().unwrap_or_default().to_owned())
        .collect();
    types.reverse();
    Ok(types)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_on_one_node_is_listed_and_commanded_through_another() -> Result<()> {
    let database = Database::new()?;
    let a = Node::start(&database, "node-a", &[]).await?;
    let b = Node::start(&database, "node-b", &[]).await?;
    let (_, token) = credential(&a, &[]).await?;
    let mut agent = agent(&[&a], &token, &[])?;
    let first = one_session_everywhere(&[&a, &b], None).await?;
    let (status, read) = b.api.get(&format!("/tunnel_sessions/{first}")).await?;
    assert_eq!(status, 200, "{read}");
    assert_eq!(read["id"], json!(first));
    // The nodes' own routes want the cluster secret: an API key, or nothing, is a 401.
    let internal = format!("/cluster/v1/tunnel_sessions/{first}/command");
    let order = json!({"account_id": "x", "command": "stop", "cause": {"actor": {"type": "system", "id": null}, "operation_id": null}});
    refuses_outsiders(&b, &internal, order).await?;

    // The agent's own refusal comes back through node B as it would through node A: no newer
    // version is known to the server.
    let (status, refused) = b.command(&first, "update").await?;
    assert_eq!(status, 409, "{refused}");
    let msg = refused["msg"].as_str().unwrap_or_default();
    assert!(msg.starts_with("No agent version newer than"), "{refused}");
    // Restart through B: the agent starts again, with a new session, still on A.
    let (status, body) = b.command(&first, "restart").await?;
    assert_eq!(status, 204, "{body}");
    let second = one_session_everywhere(&[&a, &b], Some(&first)).await?;
    // Stop through B: the agent exits, and no node lists the session once B answered.
    let (status, body) = b.command(&second, "stop").await?;
    assert_eq!(status, 204, "{body}");
    assert!(a.sessions().await?.is_empty() && b.sessions().await?.is_empty());
    let exit = agent.wait_exit(Duration::from_secs(10))?;
    assert!(exit.success(), "a stopped agent exits with 0: {exit}");
    // The session is gone: a 404 from either node.
    assert_eq!(b.command(&second, "stop").await?.0, 404);
    assert_eq!(a.command(&second, "restart").await?.0, 404);
    assert_eq!(
        event_types(&a, &second).await?,
        [
            "tunnel_session_started.v0",
            "tunnel_session_stop_requested.v0",
            "tunnel_session_ended.v0"
        ]
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_nodes_stopping_one_session_at_once_get_one_acceptance() -> Result<()> {
    let database = Database::new()?;
    let a = Node::start(&database, "node-a", &[]).await?;
    let b = Node::start(&database, "node-b", &[]).await?;
    let (_, token) = credential(&a, &[]).await?;
    let mut agent = agent(&[&a], &token, &[])?;
    let session = one_session_everywhere(&[&a, &b], None).await?;
    let (through_a, through_b) =
        tokio::join!(a.command(&session, "stop"), b.command(&session, "stop"));
    let mut statuses = [through_a?.0, through_b?.0];
    statuses.sort_unstable();
    // One is accepted; the other finds the session gone (or ending under it): a 404, never a 504.
    assert_eq!(statuses, [204, 404]);
    assert!(agent.wait_exit(Duration::from_secs(10))?.success());
    let stops = event_types(&b, &session)
        .await?
        .into_iter()
        .filter(|t| t == "tunnel_session_stop_requested.v0")
        .count();
    assert!((1..=2).contains(&stops), "the accepted stop is recorded");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_credential_changed_through_one_node_closes_sessions_on_another() -> Result<()> {
    let database = Database::new()?;
    let a = Node::start(&database, "node-a", &[]).await?;
    let b = Node::start(&database, "node-b", &[]).await?;
    // Narrowing the ACL through B ends the session A holds whose bind it refuses.
    let (narrowed, token) = credential(&b, &["bind:*.example.com"]).await?;
    let mut web = agent(&[&a], &token, &["web.example.com"])?;
    one_session_everywhere(&[&a, &b], None).await?;
    let patch = json!({"acl": ["bind:api.example.com"]});
    let (status, body) = b
        .api
        .call(
            hyper::Method::PATCH,
            &format!("/credentials/{narrowed}"),
            Some(patch),
        )
        .await?;
    assert_eq!(status, 200, "{body}");
    assert!(a.sessions().await?.is_empty(), "gone once B answered");
    let exit = web.wait_exit(Duration::from_secs(10))?;
    assert!(
        !exit.success(),
        "an agent refused by its ACL exits with an error: {exit}"
    );

    // Deleting a credential through B ends its session on A.
    let (deleted, token) = credential(&a, &[]).await?;
    let mut doomed = agent(&[&a], &token, &[])?;
    one_session_everywhere(&[&a, &b], None).await?;
    let (status, _) = b
        .api
        .call(
            hyper::Method::DELETE,
            &format!("/credentials/{deleted}"),
            None,
        )
        .await?;
    assert_eq!(status, 204);
    assert!(a.sessions().await?.is_empty() && b.sessions().await?.is_empty());
    let exit = doomed.wait_exit(Duration::from_secs(10))?;
    assert!(
        !exit.success(),
        "an agent whose credential was deleted exits with an error"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_api_key_deleted_through_one_node_is_refused_by_every_node_at_once() -> Result<()> {
    let database = Database::new()?;
    let a = Node::start(&database, "node-a", &[]).await?;
    let b = Node::start(&database, "node-b", &[]).await?;
    let created = a.api.create("/api_keys", json!({})).await?;
    let key = created["token"].as_str().context("the new key")?.to_owned();
    let with_key = |node: &Node| Api::new(&format!("{}/api", node.url()), &key);
    // Both nodes authenticate it (and keep it).
    for node in [&a, &b] {
        let (status, me) = with_key(node).get("/me").await?;
        assert_eq!(status, 200, "{me}");
    }
    // The other nodes' route that forgets keys wants the cluster secret too.
    refuses_outsiders(&b, "/cluster/v1/api_keys/forget", json!(null)).await?;
    let (status, body) = a
        .api
        .call(
            hyper::Method::DELETE,
            &format!("/api_keys/{}", id(&created)),
            None,
        )
        .await?;
    assert_eq!(status, 204, "{body}");
    for node in [&b, &a] {
        let (status, refused) = with_key(node).get("/me").await?;
        assert_eq!(status, 401, "{refused}");
        assert_eq!(refused["error_code"], json!("ERR_TUNNEL_104"), "{refused}");
    }
    Ok(())
}

/// Checks that `node` answers 401 to a `POST` of `body` to `path`, one of the routes nodes
/// call on each other, with the admin's API key, no key, or the cluster secret but for its
/// first character.
async fn refuses_outsiders(node: &Node, path: &str, body: Value) -> Result<()> {
    for key in [ADMIN_KEY, "", &CLUSTER_SECRET[1..]] {
        let outsider = Api::new(&node.url(), key);
        let (status, _) = outsider.post(path, body.clone()).await?;
        assert_eq!(status, 401, "{path} with `{key}`");
    }
    Ok(())
}

/// The description of credential `id` as `node` reads it.
async fn description(node: &Node, id: &str) -> Result<String> {
    let (status, body) = node.api.get(&format!("/credentials/{id}")).await?;
    anyhow::ensure!(status == 200, "{status} {body}");
    Ok(body["description"].as_str().unwrap_or_default().to_owned())
}

/// Whether `node` answers credential `id` from the row it read before: it reads the row, the
/// test changes it behind the servers' backs, and `node` still reads the row as it was. One
/// try can miss when a commit of the node (its heartbeat's) comes in between.
async fn keeps_rows(node: &Node, database: &Database, id: &str, round: usize) -> Result<bool> {
    let before = description(node, id).await?;
    let behind = format!("changed behind the servers {round}");
    query(
        &database.url,
        &format!("UPDATE credentials SET description = '{behind}' WHERE id = '{id}'"),
    )?;
    let after = description(node, id).await?;
    anyhow::ensure!(after == before || after == behind, "{after}");
    Ok(after == before)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_keeps_rows_only_while_alone() -> Result<()> {
    let database = Database::new()?;
    let a = Node::start(&database, "node-a", &[]).await?;
    let (id, _) = credential(&a, &[]).await?;
    let mut round = 0;
    let mut kept = false;
    while !kept && round < 5 {
        round += 1;
        kept = keeps_rows(&a, &database, &id, round).await?;
    }
    assert!(kept, "node A alone answered every read from the database");
    // The route another node calls to stop this one keeping rows wants the cluster secret.
    refuses_outsiders(&a, "/cluster/v1/rows/forget", json!(null)).await?;
    // B joins: A keeps nothing from then on, told before B answered anything.
    let mut b = Node::start(&database, "node-b", &[]).await?;
    for _ in 0..3 {
        round += 1;
        assert!(!keeps_rows(&a, &database, &id, round).await?);
        let patched = format!("patched through B {round}");
        let (status, body) = b
            .api
            .call(
                hyper::Method::PATCH,
                &format!("/credentials/{id}"),
                Some(json!({ "description": patched })),
            )
            .await?;
        assert_eq!(status, 200, "{body}");
        assert_eq!(description(&a, &id).await?, patched);
    }
    // B stops: A finds itself alone at a heartbeat (a third of the lease) and keeps rows again.
    b.process.terminate();
    b.process.wait_exit(Duration::from_secs(10))?;
    wait_for("A keeping rows again", LEASE, || {
        round += 1;
        let round = round;
        let (a, database, id) = (&a, &database, &id);
        async move { Ok(keeps_rows(a, database, id, round).await?.then_some(())) }
    })
    .await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_node_s_sessions_leave_every_list_and_its_agent_comes_back_elsewhere() -> Result<()>
{
    let database = Database::new()?;
    let mut a = Node::start(&database, "node-a", &[]).await?;
    let b = Node::start(&database, "node-b", &[]).await?;
    let (_, token) = credential(&b, &[]).await?;
    // The agent knows both nodes; it connects to the first, A.
    let _agent = agent(&[&a, &b], &token, &[])?;
    let first = one_session_everywhere(&[&a, &b], None).await?;

    a.process.kill();
    let killed = Instant::now();
    // The agent's link broke with A: it comes back through B, with a new session.
    let second = wait_for(
        "the agent back through B",
        Duration::from_secs(10),
        || async {
            let ids = b.sessions().await?;
            Ok(ids.iter().find(|id| **id != first).cloned())
        },
    )
    .await?;
    // A command to A's session meanwhile cannot reach A: a 504 saying it was not sent, and no
    // event (the audit log records commands that reached an agent, or may have).
    let (status, body) = b.command(&first, "update").await?;
    assert_eq!(status, 504, "{body}");
    assert!(
        body["msg"]
            .as_str()
            .unwrap_or_default()
            .contains("was not sent"),
        "{body}"
    );
    assert!(
        !event_types(&b, &first)
            .await?
            .iter()
            .any(|t| t == "tunnel_session_update_requested.v0"),
        "no command event for a command not sent"
    );
    // A's session stays listed until A's lease ends, and not longer.
    wait_for(
        "A's session gone from B's list",
        LEASE + Duration::from_secs(2),
        || async { Ok((!b.sessions().await?.contains(&first)).then_some(())) },
    )
    .await?;
    let gone_after = killed.elapsed();
    assert!(
        gone_after <= LEASE + Duration::from_secs(1),
        "{gone_after:?}"
    );
    assert_eq!(b.sessions().await?, std::slice::from_ref(&second));
    // B removed the dead node's session with its end, once.
    wait_for(
        "the ended event of A's session",
        Duration::from_secs(10),
        || async {
            let types = event_types(&b, &first).await?;
            let ended = types
                .iter()
                .filter(|t| *t == "tunnel_session_ended.v0")
                .count();
            anyhow::ensure!(ended <= 1, "ended twice: {types:?}");
            Ok((ended == 1).then_some(()))
        },
    )
    .await?;
    // The session on B is commanded normally.
    let (status, refused) = b.command(&second, "update").await?;
    assert_eq!(status, 409, "{refused}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_stopped_cleanly_removes_its_sessions_at_once() -> Result<()> {
    let database = Database::new()?;
    let mut a = Node::start(&database, "node-a", &[]).await?;
    let b = Node::start(&database, "node-b", &[]).await?;
    let (_, token) = credential(&b, &[]).await?;
    let printed = tempfile::NamedTempFile::new()?;
    let _agent = agent_to(&[&a, &b], &token, &[], Stdio::from(printed.reopen()?))?;
    let first = one_session_everywhere(&[&a, &b], None).await?;
    a.process.terminate();
    let stopped = Instant::now();
    wait_for(
        "A's session gone from B's list",
        Duration::from_secs(5),
        || async { Ok((!b.sessions().await?.contains(&first)).then_some(())) },
    )
    .await?;
    assert!(stopped.elapsed() < LEASE / 3, "{:?}", stopped.elapsed());
    a.process.wait_exit(Duration::from_secs(10))?;
    let types = event_types(&b, &first).await?;
    assert_eq!(
        types.last().map(String::as_str),
        Some("tunnel_session_ended.v0")
    );
    // A closed its agent's connection with a Close frame before it exited (not a reset when the
    // process went), and the agent registered again through B.
    let lines = std::fs::read_to_string(printed.path())?;
    assert!(
        lines.contains("connection lost (the server closed the connection)"),
        "{lines}"
    );
    one_session_everywhere(&[&b], Some(&first)).await?;
    Ok(())
}

/// A second server started with a running node's `--node-id` takes the membership over; the
/// first, at its next heartbeat, finds the id held, ends its connections and stops with an
/// error saying why, instead of taking agents it cannot keep and retrying for ever.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_whose_id_another_server_takes_stops_saying_why() -> Result<()> {
    let database = Database::new()?;
    let log = tempfile::NamedTempFile::new()?;
    let mut first = Node::start_to(&database, "node-a", &[], Stdio::from(log.reopen()?)).await?;
    let second = Node::start(&database, "node-a", &[]).await?;
    let exit = first.process.wait_exit(LEASE)?;
    assert!(!exit.success(), "{exit}");
    let logged = std::fs::read_to_string(log.path())?;
    assert!(
        logged.contains("another server joined the cluster as --node-id node-a"),
        "{logged}"
    );
    // The one that took the id over carries on, its membership intact.
    let (_, token) = credential(&second, &[]).await?;
    let _agent = agent(&[&second], &token, &[])?;
    one_session_everywhere(&[&second], None).await?;
    tokio::time::sleep(LEASE / 3 + Duration::from_secs(1)).await;
    one_session_everywhere(&[&second], None).await?;
    Ok(())
}

/// A node started with another cluster secret than the others: what it asks of them is refused
/// at the door, so a command through it says that it was not sent (not that it may have
/// reached the agent), and its log names the secret. It had answered "may not have reached the
/// agent" and logged a bare "HTTP 401".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_with_another_cluster_secret_says_so() -> Result<()> {
    let database = Database::new()?;
    let a = Node::start(&database, "node-a", &[]).await?;
    let log = tempfile::NamedTempFile::new()?;
    let stranger = Node::start_to(
        &database,
        "node-c",
        &[(
            "TUNNEL_CLUSTER_SECRET",
            "another-secret-of-the-right-length-0123456789",
        )],
        Stdio::from(log.reopen()?),
    )
    .await?;
    let (_, token) = credential(&a, &[]).await?;
    let _agent = agent(&[&a], &token, &[])?;
    let session = one_session_everywhere(&[&a, &stranger], None).await?;
    let (status, body) = stranger.command(&session, "stop").await?;
    assert_eq!(status, 504, "{body}");
    let msg = body["msg"].as_str().unwrap_or_default();
    assert!(msg.contains("was not sent"), "{body}");
    // The agent was not stopped: the session is still there.
    assert_eq!(a.sessions().await?, vec![session]);
    let logged = std::fs::read_to_string(log.path())?;
    assert!(
        logged.contains("every node needs the same --cluster-secret"),
        "{logged}"
    );
    Ok(())
}

/// A webhook receiver that accepts connections and never answers: its URL, the task holding
/// the connections (abort it at the end), and when each connection came.
async fn silent_receiver() -> Result<(
    String,
    tokio::task::JoinHandle<()>,
    tokio::sync::mpsc::UnboundedReceiver<Instant>,
)> {
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}/hook", silent.local_addr()?);
    let (accepted, attempts) = tokio::sync::mpsc::unbounded_channel();
    let held = tokio::spawn(async move {
        let mut kept = Vec::new();
        while let Ok((conn, _)) = silent.accept().await {
            kept.push(conn);
            let _ = accepted.send(Instant::now());
        }
    });
    Ok((url, held, attempts))
}

/// A request still running when the node is told to stop (here a webhook test waiting for a
/// receiver that never answers) does not hold its agents: they are sent away at once, and the
/// request is answered before the node exits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopping_node_sends_its_agents_away_before_its_last_requests_end() -> Result<()> {
    let database = Database::new()?;
    let slow = [
        ("TUNNEL_ALLOW_PRIVATE_WEBHOOKS", "true"),
        ("TUNNEL_WEBHOOK_TIMEOUT", "8s"),
    ];
    let mut a = Node::start(&database, "node-a", &slow).await?;
    let b = Node::start(&database, "node-b", &[]).await?;
    // Never answers: the test request waits its 8 s.
    let (silent_url, held, _) = silent_receiver().await?;
    let destination = a
        .api
        .create(
            "/event_destinations",
            json!({"target": {"webhook": {"url": silent_url}}}),
        )
        .await?;
    let (_, token) = credential(&b, &[]).await?;
    let _agent = agent(&[&a, &b], &token, &[])?;
    let first = one_session_everywhere(&[&a, &b], None).await?;
    let api = a.api.clone();
    let test_path = format!("/event_destinations/{}/test", id(&destination));
    let pending = tokio::spawn(async move { api.post(&test_path, json!({})).await });
    tokio::time::sleep(Duration::from_millis(500)).await;
    a.process.terminate();
    let stopped = Instant::now();
    one_session_everywhere(&[&b], Some(&first)).await?;
    let back = stopped.elapsed();
    assert!(
        back < Duration::from_secs(4),
        "the agent came back through B after {back:?}"
    );
    assert!(
        !pending.is_finished(),
        "the test request is still waiting for the receiver"
    );
    let (status, body): (u16, Value) = pending.await??;
    assert_eq!(status, 200, "answered before the node exits: {body}");
    a.process.wait_exit(Duration::from_secs(10))?;
    held.abort();
    Ok(())
}

/// A node stopped cleanly while sending a webhook: the send ends (here it times out) and is
/// recorded before the node exits, and the other node, told that it left, retries it at once,
/// not when it would next have looked (up to half a minute later).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_stopping_mid_send_hands_the_retry_to_another_at_once() -> Result<()> {
    let database = Database::new()?;
    let settings = [
        ("TUNNEL_ALLOW_PRIVATE_WEBHOOKS", "true"),
        ("TUNNEL_WEBHOOK_TIMEOUT", "2s"),
        ("TUNNEL_WEBHOOK_RETRY_BASE_MS", "300"),
    ];
    let mut a = Node::start(&database, "node-a", &settings).await?;
    let b = Node::start(&database, "node-b", &settings).await?;
    // Never answers; each attempt is a connection of its own.
    let (silent_url, held, mut attempts) = silent_receiver().await?;
    let destination = a
        .api
        .create(
            "/event_destinations",
            json!({"target": {"webhook": {"url": silent_url}}}),
        )
        .await?;
    a.api
        .create(
            "/event_subscriptions",
            json!({"sources": [{"type": "credential_created.v0"}], "destination_ids": [id(&destination)]}),
        )
        .await?;
    // Through A, whose commit wakes its own worker: A sends first.
    a.api.create("/credentials", json!({})).await?;
    tokio::time::timeout(Duration::from_secs(10), attempts.recv())
        .await?
        .context("the first attempt")?;
    a.process.terminate();
    let stopped = Instant::now();
    a.process.wait_exit(Duration::from_secs(15))?;
    let retried = tokio::time::timeout(Duration::from_secs(10), attempts.recv())
        .await
        .context("no retry from B within 10 s")?
        .context("the retry")?;
    let after = retried - stopped;
    assert!(
        after < Duration::from_secs(6),
        "B retried {after:?} after A was told to stop"
    );
    // Recorded: the attempt A made, which timed out, and B's.
    let (_, listed) = b
        .api
        .get(&format!(
            "/event_destinations/{}/deliveries",
            id(&destination)
        ))
        .await?;
    let recorded = listed["deliveries"][0]["attempts"].as_array().map(Vec::len);
    assert!(recorded >= Some(1), "{listed}");
    held.abort();
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_node_delivers_webhooks_and_no_event_is_sent_twice() -> Result<()> {
    let database = Database::new()?;
    let private = [("TUNNEL_ALLOW_PRIVATE_WEBHOOKS", "true")];
    let a = Node::start(&database, "node-a", &private).await?;
    let b = Node::start(&database, "node-b", &private).await?;
    let receiver = WebhookReceiver::start().await?;
    let destination = a
        .api
        .create(
            "/event_destinations",
            json!({"target": {"webhook": {"url": receiver.url()}}}),
        )
        .await?;
    a.api
        .create(
            "/event_subscriptions",
            json!({"sources": [{"type": "credential_created.v0"}], "destination_ids": [id(&destination)]}),
        )
        .await?;
    // Writes through both nodes: both delivery workers are woken and race for the claims.
    let mut created = Vec::new();
    for n in 0..20 {
        let node = if n % 2 == 0 { &a } else { &b };
        created.push(id(&node.api.create("/credentials", json!({})).await?));
    }
    let bodies = wait_for("20 deliveries", Duration::from_secs(30), || async {
        let bodies = receiver.bodies();
        Ok((bodies.len() >= created.len()).then_some(bodies))
    })
    .await?;
    // A moment more: a duplicate would arrive now.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let bodies = if receiver.bodies().len() > bodies.len() {
        receiver.bodies()
    } else {
        bodies
    };
    let mut delivered: Vec<String> = bodies
        .iter()
        .map(|b| {
            serde_json::from_str::<Value>(b)
                .map(|e| e["object_id"].as_str().unwrap_or_default().to_owned())
        })
        .collect::<Result<_, _>>()?;
    delivered.sort();
    created.sort();
    assert_eq!(delivered, created, "each event delivered exactly once");
    Ok(())
}

/// Sends `signal` (`STOP`, `CONT`) to the process `pid`.
fn signal(pid: u32, signal: &str) -> Result<()> {
    let status = Command::new("kill")
        .args([&format!("-{signal}"), &pid.to_string()])
        .status()?;
    anyhow::ensure!(status.success(), "kill -{signal} {pid}: {status}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_paused_past_its_lease_gives_its_sessions_up_and_its_agent_registers_again()
-> Result<()> {
    let database = Database::new()?;
    // A short lease, so the pause outlasts it quickly.
    let lease = [("TUNNEL_NODE_LEASE", "3s")];
    let a = Node::start(&database, "node-a", &lease).await?;
    let b = Node::start(&database, "node-b", &lease).await?;
    let (_, token) = credential(&b, &[]).await?;
    let _agent = agent(&[&a], &token, &[])?;
    let first = one_session_everywhere(&[&a, &b], None).await?;

    // A stops answering (as a machine that froze, or lost the database): B removes it, with the
    // end of its session, once its lease is over.
    signal(a.process.pid(), "STOP")?;
    let resumed = async {
        wait_for("A removed by B", Duration::from_secs(15), || async {
            let types = event_types(&b, &first).await?;
            Ok(types
                .iter()
                .any(|t| t == "tunnel_session_ended.v0")
                .then_some(()))
        })
        .await?;
        assert!(b.sessions().await?.is_empty());
        anyhow::Ok(())
    }
    .await;
    signal(a.process.pid(), "CONT")?;
    resumed?;
    // A resumes, finds it was removed: it ends the connection it still held, so the agent
    // registers again (through A, its only server), and A joins the cluster again.
    let second = one_session_everywhere(&[&a, &b], Some(&first)).await?;
    let ended = event_types(&b, &first)
        .await?
        .into_iter()
        .filter(|t| t == "tunnel_session_ended.v0")
        .count();
    assert_eq!(ended, 1, "the old session ended once");
    let (status, refused) = b.command(&second, "update").await?;
    assert_eq!(status, 409, "A answers for its new session: {refused}");
    Ok(())
}
