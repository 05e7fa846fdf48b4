//! `cargo xtask run --nodes N`: a local cluster of N `tunnel-server` nodes on one PostgreSQL
//! database, behind nginx on `--listen`, to try the server's cluster mode by hand.
//!
//! Every piece is a child of this command, stopped when it stops (Ctrl-C, SIGTERM, or a child
//! that dies): PostgreSQL (a throwaway cluster from `tunnel_testkit`, unless `--database`
//! names one), the nodes on free loopback ports, and nginx as a plain foreground process whose
//! prefix, configuration, logs and temporary files are in a temporary directory (so it needs no
//! root and touches nothing in /etc or /var). A node that dies is only reported while another
//! one is left, so that killing one shows nginx moving its requests to the others.

use crate::run::{DEFAULT_DATABASE, build, data_dir, is_postgres, random_hex, server_key};
use crate::shell::{cmd, done, step};
use crate::tools::{NGINX, ensure_nginx, ensure_postgres};
use anyhow::{Context, Result, bail};
use std::io::{BufRead as _, BufReader, Read};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs as _};
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use tunnel_testkit::postgres::{Cluster, create_database};
use tunnel_testkit::process::{ProcessGuard, free_port};

/// How long a node may take to listen (the first one migrates the database), and nginx.
const START: Duration = Duration::from_secs(60);
/// How long a child has to stop after SIGTERM before it is killed.
const STOP: Duration = Duration::from_secs(10);
/// How often the children are checked while the cluster runs.
const POLL: Duration = Duration::from_millis(200);
/// How often the local PostgreSQL is checked (a connection costs it a process).
const POSTGRES_POLL: Duration = Duration::from_secs(2);

/// One node of the cluster.
#[derive(Debug)]
struct Node {
    /// `node-1` … `node-N`.
    id: String,
    addr: SocketAddr,
}

impl Node {
    /// Where the other nodes and the user reach this node directly.
    fn url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

/// The server's cluster options of `node`, as environment variables (each option reads the
/// variable of its name; docs/cluster.md): the one list to adjust when the server's options
/// change. In the environment rather than on the command line because the secret must not
/// show in `ps`.
fn cluster_options(node: &Node, secret: &str, public_url: &str) -> [(&'static str, String); 4] {
    [
        // --node-id: this node's name in the cluster.
        ("TUNNEL_NODE_ID", node.id.clone()),
        // --advertise-url: where the other nodes reach this one.
        ("TUNNEL_ADVERTISE_URL", node.url()),
        // --cluster-secret: shared by every node, authenticates the nodes to each other.
        ("TUNNEL_CLUSTER_SECRET", secret.to_owned()),
        // --public-url: every `uri` the API returns points at nginx, not at one node.
        ("TUNNEL_PUBLIC_URL", public_url.to_owned()),
    ]
}

pub fn run(listen: &str, database: &str, count: usize) -> Result<()> {
    // SQLite is one file of one process: the nodes share a PostgreSQL database.
    let local_postgres = !is_postgres(database);
    if local_postgres && database != DEFAULT_DATABASE {
        bail!(
            "--nodes needs PostgreSQL: give --database postgres://… (TUNNEL_DATABASE) or none \
             for a local throwaway cluster, not `{database}`"
        );
    }
    let listen_addr = resolve(listen)?;
    // Checked before the builds and before anything starts: nginx would fail late, and the wait
    // for its port would take the other program's listener for nginx.
    TcpListener::bind(listen_addr)
        .with_context(|| format!("{listen} is in use: give another address with --listen"))?;
    ensure_nginx()?;
    if local_postgres {
        ensure_postgres()?;
    }
    let server = build()?;
    let data = data_dir()?;
    let key = server_key(&data)?;

    // From here on Ctrl-C sets the flag instead of killing this process before it can stop its
    // children, which run in process groups of their own and do not see the terminal's signal.
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
    ] {
        signal_hook::flag::register(signal, Arc::clone(&stop))
            .context("installing the Ctrl-C handler")?;
    }
    let stopped = || stop.load(Ordering::SeqCst);

    // Declared in start order, so an early return drops (kills) them in the reverse order.
    let timer = step("PostgreSQL");
    let cluster = if local_postgres {
        let cluster = Cluster::start_durable().context("starting a local PostgreSQL cluster")?;
        println!(
            "    PostgreSQL {} on 127.0.0.1:{}: a throwaway cluster in a temporary directory, \
             deleted when this stops (give --database postgres://… to keep the data)",
            cluster.binaries().version,
            cluster.port()
        );
        Some(cluster)
    } else {
        println!("    the database of --database");
        None
    };
    let database = match &cluster {
        Some(cluster) => create_database(&cluster.admin_url(), "tunnel")?,
        None => database.to_owned(),
    };
    done(timer);

    let timer = step(&format!("{count} nodes"));
    let secret = random_hex(32)?;
    let public_url = format!("http://{listen}/api");
    let mut nodes: Vec<(Node, ProcessGuard)> = Vec::new();
    for n in 1..=count {
        if stopped() {
            bail!("interrupted");
        }
        let node = Node {
            id: format!("node-{n}"),
            addr: SocketAddr::from(([127, 0, 0, 1], free_port()?)),
        };
        let mut command = cmd(
            &server.to_string_lossy(),
            &[
                "serve",
                "--listen",
                &node.addr.to_string(),
                "--console-dir",
                "dist",
            ],
        );
        // The database URL may hold a password and the key is a secret: not on the command line.
        command
            .env("TUNNEL_DATABASE", &database)
            .env("TUNNEL_SERVER_KEY", &key)
            .envs(cluster_options(&node, &secret, &public_url))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if std::env::var_os("RUST_LOG").is_none() {
            command.env("RUST_LOG", "info");
        }
        println!(
            "    $ {} serve --listen {} --console-dir dist ({})",
            server.display(),
            node.addr,
            node.id
        );
        let mut guard = ProcessGuard::spawn(&node.id, command)?;
        forward_output(&node.id, &mut guard);
        // One at a time: the first migrates the database and, on an empty one, creates the
        // admin and prints its API key, which must come once and not amid the others' start.
        wait_ready(&node, &mut guard)?;
        nodes.push((node, guard));
    }
    done(timer);

    let timer = step("nginx");
    let prefix = tempfile::Builder::new()
        .prefix("tunnel-nginx-")
        .tempdir()
        .context("creating nginx's directory")?;
    let conf = prefix.path().join("nginx.conf");
    let addrs: Vec<SocketAddr> = nodes.iter().map(|(node, _)| node.addr).collect();
    std::fs::write(
        &conf,
        tunnel_testkit::nginx::config(
            prefix.path(),
            listen,
            &addrs,
            true,
            &format!("`cargo xtask run --nodes {}`", addrs.len()),
        ),
    )
    .context("writing nginx.conf")?;
    let prefix_arg = prefix.path().to_string_lossy().into_owned();
    let conf_arg = conf.to_string_lossy().into_owned();
    let error_log = prefix.path().join("error.log");
    let mut command = cmd(
        NGINX,
        &[
            "-p",
            &prefix_arg,
            "-c",
            &conf_arg,
            // Errors before the configuration is read go here too, not to /var/log/nginx.
            "-e",
            &error_log.to_string_lossy(),
            "-g",
            "daemon off;",
        ],
    );
    command.stdin(Stdio::null());
    println!("    $ {NGINX} -p {prefix_arg} -c {conf_arg} -g 'daemon off;'");
    let mut nginx = ProcessGuard::spawn("nginx", command)?;
    nginx
        .wait_for_port(listen_addr, START)
        .with_context(|| format!("nginx's error log:\n{}", tail(&error_log)))?;
    done(timer);

    println!("\n==> Tunnel Console on {count} nodes: open http://{listen}/ (API at {public_url})");
    println!("    sign in with the admin API key node-1 printed above (first start only)");
    for (node, _) in &nodes {
        println!("    {}: {} (direct)", node.id, node.url());
    }
    println!(
        "    nginx balances them round-robin; its access log names the node of each request:\n        tail -f {}",
        prefix.path().join("access.log").display()
    );
    println!("    Ctrl-C stops nginx, the nodes and PostgreSQL.\n");

    let outcome = watch(&stopped, &mut nodes, &mut nginx, cluster.as_ref());
    println!("\n==> stopping nginx, the nodes and PostgreSQL");
    // In front first, so no request reaches a node that is stopping; the nodes before the
    // database they use.
    terminate(&mut nginx);
    for (_, guard) in &mut nodes {
        terminate(guard);
    }
    drop(nginx);
    drop(nodes);
    let postgres = cluster.map_or(Ok(()), Cluster::stop);
    outcome.and(postgres)
}

/// Waits until Ctrl-C (`Ok`) or until a child whose loss ends the cluster dies (an error naming
/// it): nginx, PostgreSQL, or the last node. A node that dies while others remain is reported
/// and left out; nginx already skips it.
fn watch(
    stopped: &dyn Fn() -> bool,
    nodes: &mut Vec<(Node, ProcessGuard)>,
    nginx: &mut ProcessGuard,
    cluster: Option<&Cluster>,
) -> Result<()> {
    let mut postgres_checked = Instant::now();
    while !stopped() {
        if let Some(status) = nginx.child().try_wait()? {
            bail!("nginx exited ({status})");
        }
        let mut i = 0;
        while i < nodes.len() {
            if let Some(status) = nodes[i].1.child().try_wait()? {
                let (node, _) = nodes.remove(i);
                if nodes.is_empty() {
                    bail!("{} exited ({status}), the last node", node.id);
                }
                println!(
                    "==> {} exited ({status}); nginx sends its requests to the {} other node(s)",
                    node.id,
                    nodes.len()
                );
            } else {
                i += 1;
            }
        }
        if let Some(cluster) = cluster
            && postgres_checked.elapsed() >= POSTGRES_POLL
        {
            postgres_checked = Instant::now();
            let addr = SocketAddr::from(([127, 0, 0, 1], cluster.port()));
            if TcpStream::connect_timeout(&addr, Duration::from_secs(1)).is_err() {
                bail!("PostgreSQL stopped listening on {addr}");
            }
        }
        std::thread::sleep(POLL);
    }
    println!("\n==> interrupted");
    Ok(())
}

/// Waits (bounded) until `node` answers HTTP. Its port alone says too little: the server binds
/// it before migrating the database and creating the first admin, and serves only after.
fn wait_ready(node: &Node, guard: &mut ProcessGuard) -> Result<()> {
    let deadline = Instant::now() + START;
    loop {
        if let Some(status) = guard.child().try_wait()? {
            bail!("{} exited while starting ({status})", node.id);
        }
        if answers_http(node.addr) {
            return Ok(());
        }
        if Instant::now() >= deadline {
            bail!(
                "{} did not answer on {} within {START:?}",
                node.id,
                node.addr
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Whether `GET /api/openapi.json` (which needs no key) on `addr` gets an HTTP answer.
fn answers_http(addr: SocketAddr) -> bool {
    use std::io::Write as _;
    let Ok(mut stream) = TcpStream::connect_timeout(&addr, Duration::from_millis(200)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_millis(500)));
    let mut head = [0u8; 5];
    stream
        .write_all(b"GET /api/openapi.json HTTP/1.0\r\n\r\n")
        .and_then(|()| stream.read_exact(&mut head))
        .is_ok_and(|()| &head == b"HTTP/")
}

/// SIGTERM (nginx's fast shutdown, the server's clean stop) to the child's process group, then
/// a bounded wait; the guard kills whatever is left when it is dropped. The group, not the
/// child alone: nginx's workers outlive a master that was killed, and the guard only signals a
/// group whose leader still runs.
fn terminate(guard: &mut ProcessGuard) {
    if let Ok(pid) = i32::try_from(guard.pid()) {
        // ESRCH when the whole group is gone already.
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGTERM,
        );
    }
    if guard.is_running()
        && let Err(e) = guard.wait_exit(STOP)
    {
        eprintln!("xtask: {e:#}; killing it");
    }
}

/// Copies the child's stdout and stderr to ours, each line prefixed with `name`, so the nodes'
/// logs can be told apart (and node-1's admin key shows).
fn forward_output(name: &str, guard: &mut ProcessGuard) {
    fn copy(prefix: String, from: impl Read + Send + 'static, to_stderr: bool) {
        std::thread::spawn(move || {
            for line in BufReader::new(from).lines() {
                let Ok(line) = line else { break };
                if to_stderr {
                    eprintln!("{prefix}{line}");
                } else {
                    println!("{prefix}{line}");
                }
            }
        });
    }
    let prefix = format!("[{name}] ");
    if let Some(out) = guard.child().stdout.take() {
        copy(prefix.clone(), out, false);
    }
    if let Some(err) = guard.child().stderr.take() {
        copy(prefix, err, true);
    }
}

/// The first address `listen` resolves to.
fn resolve(listen: &str) -> Result<SocketAddr> {
    listen
        .to_socket_addrs()
        .with_context(|| format!("--listen {listen} is not an address"))?
        .next()
        .with_context(|| format!("--listen {listen} resolves to no address"))
}

/// The last lines of a log file, for error messages.
fn tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(20)..].join("\n")
}
