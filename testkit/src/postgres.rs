//! A real PostgreSQL server for the tests (no mock database): Debian's server binaries
//! (`postgresql` package, installed by `cargo xtask test`), a throwaway cluster in a temporary
//! directory on a free loopback port, databases created on it, and the `TUNNEL_TEST_POSTGRES`
//! contract through which a whole test run is pointed at one shared cluster.
//!
//! The PostgreSQL server refuses to run as root, so when the tests run as root every PostgreSQL
//! program (`initdb`, `postgres`) runs as Debian's unprivileged system user `postgres`, created
//! by the package; otherwise as the current user. The client programs (`createdb`, `psql`) run as
//! the caller and authenticate over TCP with a password passed in `PGPASSWORD`, never on a
//! command line where `ps` would show it.
//!
//! The postmaster runs in a [`ProcessGuard`], so it dies with its backends when the [`Cluster`]
//! is dropped, also when a test panics; the drop first asks for a fast shutdown (bounded) so the
//! server stops cleanly, then the temporary directory goes.

use crate::process::{ProcessGuard, free_port};
use anyhow::{Context, Result, bail};
use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::fs::{OpenOptionsExt as _, chown};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The environment variable that points a test run at a shared cluster: the admin URL of
/// [`Cluster::admin_url`] (`postgres://tunnel:<password>@127.0.0.1:<port>/postgres`). When it is
/// set, [`test_database`] gives every test a fresh database on that cluster; when it is unset
/// or empty, the tests use SQLite.
pub const TEST_POSTGRES_ENV: &str = "TUNNEL_TEST_POSTGRES";

/// The superuser [`Cluster::start`] creates.
pub const SUPERUSER: &str = "tunnel";

/// Where Debian installs one directory per major version of the server.
const DEBIAN_ROOT: &str = "/usr/lib/postgresql";

/// How long a cluster may take to accept connections, and to shut down.
const START: Duration = Duration::from_secs(60);
const STOP: Duration = Duration::from_secs(15);

/// Debian's PostgreSQL programs of the highest installed major version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binaries {
    /// `/usr/lib/postgresql/<version>/bin`.
    pub dir: PathBuf,
    /// The major version (`15`).
    pub version: u32,
}

impl Binaries {
    /// Finds `/usr/lib/postgresql/<highest version>/bin` with every program the harness runs.
    pub fn find() -> Result<Binaries> {
        let missing = || {
            format!(
                "PostgreSQL's server programs are not installed (no {DEBIAN_ROOT}/<version>/bin/postgres): \
                 run `cargo xtask test`, which installs Debian's `postgresql` package, or \
                 `apt-get install postgresql`"
            )
        };
        let entries = std::fs::read_dir(DEBIAN_ROOT).with_context(missing)?;
        let mut best: Option<Binaries> = None;
        for entry in entries.flatten() {
            let Some(version) = entry
                .file_name()
                .to_str()
                .and_then(|name| name.parse::<u32>().ok())
            else {
                continue;
            };
            let dir = entry.path().join("bin");
            let complete = [
                "initdb",
                "postgres",
                "pg_ctl",
                "pg_isready",
                "createdb",
                "psql",
            ]
            .iter()
            .all(|program| dir.join(program).is_file());
            if complete && best.as_ref().is_none_or(|b| version > b.version) {
                best = Some(Binaries { dir, version });
            }
        }
        best.with_context(missing)
    }

    /// The program `name` of this version.
    pub fn program(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// `postgres --version`, e.g. `postgres (PostgreSQL) 15.14 (Debian 15.14-0+deb12u1)`.
    pub fn server_version(&self) -> Result<String> {
        let out = Command::new(self.program("postgres"))
            .arg("--version")
            .output()
            .context("running postgres --version")?;
        if !out.status.success() {
            bail!("postgres --version failed: {}", out.status);
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
    }
}

/// The account PostgreSQL's server programs run as: `None` for the current user, or the uid
/// and gid of Debian's `postgres` system user when the current process is root.
#[derive(Debug, Clone, Copy)]
struct RunAs(Option<(u32, u32)>);

impl RunAs {
    fn for_this_process() -> Result<RunAs> {
        if !nix::unistd::geteuid().is_root() {
            return Ok(RunAs(None));
        }
        let user = nix::unistd::User::from_name("postgres")
            .context("looking up the `postgres` system user")?
            .context(
                "running as root, and there is no `postgres` system user to run PostgreSQL as \
                 (Debian's `postgresql` package creates it: run `cargo xtask test`)",
            )?;
        Ok(RunAs(Some((user.uid.as_raw(), user.gid.as_raw()))))
    }

    /// Hands `path` to the server's account (nothing to do when that is the current user).
    fn own(&self, path: &Path) -> Result<()> {
        if let Some((uid, gid)) = self.0 {
            chown(path, Some(uid), Some(gid))
                .with_context(|| format!("handing {} to the postgres user", path.display()))?;
        }
        Ok(())
    }

    /// `program` (a server program) as this account, in `cwd`, with no `PG*` variable of the
    /// caller's environment (they would point it at another cluster).
    fn command(&self, program: PathBuf, cwd: &Path) -> Command {
        let mut command = Command::new(program);
        command.current_dir(cwd);
        without_pg_env(&mut command);
        if let Some((uid, gid)) = self.0 {
            // std drops the supplementary groups too when it switches from root.
            command.uid(uid).gid(gid);
        }
        command
    }
}

/// Removes the caller's `PG*` variables (`PGHOST`, `PGPORT`, `PGDATA`, …) from `command`.
fn without_pg_env(command: &mut Command) {
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("PG") {
            command.env_remove(name);
        }
    }
}

/// `n` random bytes as lowercase hex (passwords and database names).
fn random_hex(n: usize) -> Result<String> {
    let mut bytes = vec![0u8; n];
    getrandom::fill(&mut bytes).map_err(|e| anyhow::anyhow!("no random bytes: {e}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// A running PostgreSQL cluster of its own, in a temporary directory, listening on
/// 127.0.0.1 only; stopped and deleted on drop.
pub struct Cluster {
    // Options so that `Drop` can stop the server before the directory goes, in that order.
    process: Option<ProcessGuard>,
    dir: Option<tempfile::TempDir>,
    port: u16,
    password: String,
    binaries: Binaries,
}

/// Without the password (a `Cluster` may end up in a failed test's output).
impl std::fmt::Debug for Cluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cluster")
            .field("port", &self.port)
            .field("dir", &self.dir.as_ref().map(|d| d.path()))
            .field("binaries", &self.binaries)
            .finish_non_exhaustive()
    }
}

impl Cluster {
    /// A cluster tuned for tests: no fsync, no synchronous commit, no full-page writes (a crash
    /// of the machine may lose it, which a throwaway cluster does not mind).
    pub fn start() -> Result<Cluster> {
        Cluster::launch(&[
            "fsync=off",
            "synchronous_commit=off",
            "full_page_writes=off",
        ])
    }

    /// A cluster with PostgreSQL's durable defaults, for benchmarks whose numbers should be
    /// those of a real deployment.
    pub fn start_durable() -> Result<Cluster> {
        Cluster::launch(&[])
    }

    fn launch(settings: &[&str]) -> Result<Cluster> {
        let binaries = Binaries::find()?;
        let run_as = RunAs::for_this_process()?;
        // The postgres user must be able to reach the directory; the caller's TMPDIR may sit
        // under a home it cannot enter, /tmp never does.
        let dir = match run_as.0 {
            Some(_) => tempfile::Builder::new()
                .prefix("tunnel-pg-")
                .tempdir_in("/tmp"),
            None => tempfile::Builder::new().prefix("tunnel-pg-").tempdir(),
        }
        .context("creating the cluster's temporary directory")?;
        run_as.own(dir.path())?;
        let data = dir.path().join("data");
        let sockets = dir.path().join("sockets");
        std::fs::create_dir(&sockets)?;
        run_as.own(&sockets)?;

        let password = random_hex(16)?;
        let pwfile = dir.path().join("pwfile");
        {
            let mut file = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&pwfile)?;
            writeln!(file, "{password}")?;
        }
        run_as.own(&pwfile)?;

        let initdb_log = dir.path().join("initdb.log");
        let out = File::create(&initdb_log)?;
        let status = run_as
            .command(binaries.program("initdb"), dir.path())
            .arg("-D")
            .arg(&data)
            .args([
                "--username",
                SUPERUSER,
                "--auth=scram-sha-256",
                "--encoding=UTF8",
                "--locale=C",
                "--no-sync",
            ])
            .arg("--pwfile")
            .arg(&pwfile)
            .stdin(Stdio::null())
            .stdout(out.try_clone()?)
            .stderr(out)
            .status()
            .context("running initdb")?;
        std::fs::remove_file(&pwfile)?;
        if !status.success() {
            bail!("initdb failed ({status}):\n{}", tail(&initdb_log));
        }

        let port = free_port()?;
        let log = dir.path().join("postgres.log");
        let out = File::create(&log)?;
        let mut command = run_as.command(binaries.program("postgres"), dir.path());
        command
            .arg("-D")
            .arg(&data)
            .args(["-c", "listen_addresses=127.0.0.1", "-p", &port.to_string()])
            .arg("-k")
            .arg(&sockets)
            // Every test of a run may hold a pool of its own on the shared cluster.
            .args(["-c", "max_connections=300"])
            .stdin(Stdio::null())
            .stdout(out.try_clone()?)
            .stderr(out);
        for setting in settings {
            command.args(["-c", setting]);
        }
        let process = ProcessGuard::spawn("postgres", command)?;
        let mut cluster = Cluster {
            process: Some(process),
            dir: Some(dir),
            port,
            password,
            binaries,
        };
        cluster
            .wait_ready()
            .with_context(|| format!("postgres log:\n{}", tail(&log)))?;
        Ok(cluster)
    }

    /// Waits (bounded) until the server answers queries, failing early when it exits.
    fn wait_ready(&mut self) -> Result<()> {
        let deadline = Instant::now() + START;
        let addr = SocketAddr::from(([127, 0, 0, 1], self.port));
        loop {
            if let Some(process) = self.process.as_mut()
                && let Some(status) = process.child().try_wait()?
            {
                bail!("postgres exited while starting: {status}");
            }
            // A TCP connect first (cheap), then pg_isready, which tells a server still
            // starting up (it accepts the connection but refuses the login) from a ready one.
            if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
                let mut ready = Command::new(self.binaries.program("pg_isready"));
                without_pg_env(&mut ready);
                let ready = ready
                    .args(["-q", "-h", "127.0.0.1", "-p", &self.port.to_string()])
                    .args(["-U", SUPERUSER, "-d", "postgres"])
                    .status()
                    .context("running pg_isready")?;
                if ready.success() {
                    query(&self.admin_url(), "select 1")?;
                    return Ok(());
                }
            }
            if Instant::now() >= deadline {
                bail!(
                    "postgres did not accept connections on {addr} within {} s",
                    START.as_secs()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// `postgres://tunnel:<password>@127.0.0.1:<port>/postgres`: the superuser on the
    /// maintenance database, what [`create_database`] and [`TEST_POSTGRES_ENV`] take.
    pub fn admin_url(&self) -> String {
        format!(
            "postgres://{SUPERUSER}:{}@127.0.0.1:{}/postgres",
            self.password, self.port
        )
    }

    /// The loopback port the server listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The PostgreSQL programs this cluster runs.
    pub fn binaries(&self) -> &Binaries {
        &self.binaries
    }

    /// Stops the server with a fast shutdown (clients disconnected, a clean checkpoint) and
    /// waits for it (bounded); kills it when it does not stop in time. Idempotent.
    fn shutdown(&mut self) -> Result<()> {
        let Some(mut process) = self.process.take() else {
            return Ok(());
        };
        if !process.is_running() {
            return Ok(());
        }
        // SIGINT is PostgreSQL's fast shutdown (what `pg_ctl stop -m fast` sends); SIGTERM's
        // smart shutdown would wait for every client to leave. Root may signal the postgres
        // user's processes, so this works either way.
        let pid = i32::try_from(process.pid())?;
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGINT,
        )?;
        let stopped = process.wait_exit(STOP).map(|_| ());
        // Dropping the guard kills the process group if anything is left of it.
        drop(process);
        stopped
    }

    /// Stops the server (as dropping does) and reports whether it stopped in time.
    pub fn stop(mut self) -> Result<()> {
        self.shutdown()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if let Err(e) = self.shutdown() {
            eprintln!("stopping the PostgreSQL test cluster: {e:#}");
        }
        // The data directory only goes once the server no longer writes to it.
        drop(self.dir.take());
    }
}

/// The last lines of a log file, for error messages.
fn tail(path: &Path) -> String {
    let mut text = String::new();
    if let Ok(mut file) = File::open(path) {
        let _ = file.read_to_string(&mut text);
    }
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(30)..].join("\n")
}

/// The parts of a `postgres://user:password@host:port/db` URL the client programs take as
/// options and environment.
struct Target {
    url: url::Url,
    host: String,
    port: u16,
    user: String,
    password: Option<String>,
    database: String,
}

/// Never prints the password (nor the URL, which holds it).
impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Target")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("user", &self.user)
            .field("database", &self.database)
            .finish_non_exhaustive()
    }
}

impl Target {
    fn parse(text: &str) -> Result<Target> {
        let url = url::Url::parse(text).context("not a postgres:// URL")?;
        if !matches!(url.scheme(), "postgres" | "postgresql") {
            bail!("not a postgres:// URL (scheme `{}`)", url.scheme());
        }
        let decode = |s: &str| {
            percent_encoding::percent_decode_str(s)
                .decode_utf8()
                .map(|s| s.into_owned())
                .context("a URL part that is not UTF-8")
        };
        let host = url.host_str().context("the URL names no host")?.to_owned();
        let user = decode(url.username())?;
        if user.is_empty() {
            bail!("the URL names no user");
        }
        let password = url.password().map(decode).transpose()?;
        let database = decode(url.path().trim_start_matches('/'))?;
        Ok(Target {
            port: url.port().unwrap_or(5432),
            host,
            user,
            password,
            database: if database.is_empty() {
                "postgres".into()
            } else {
                database
            },
            url,
        })
    }

    /// A client program connecting to this target: host, port and user as options, the
    /// password in `PGPASSWORD`, never prompting.
    fn command(&self, program: PathBuf) -> Command {
        let mut command = Command::new(program);
        without_pg_env(&mut command);
        command
            .args([
                "-h",
                &self.host,
                "-p",
                &self.port.to_string(),
                "-U",
                &self.user,
            ])
            .arg("-w")
            .stdin(Stdio::null());
        if let Some(password) = &self.password {
            command.env("PGPASSWORD", password);
        }
        command
    }

    /// The URL of database `name` on the same server as the same user.
    fn with_database(&self, name: &str) -> String {
        let mut url = self.url.clone();
        url.set_path(&format!("/{name}"));
        url.to_string()
    }
}

/// Runs `command`, failing with its stderr when it exits non-zero; its stdout.
fn run(mut command: Command, what: &str) -> Result<String> {
    let out = command
        .output()
        .with_context(|| format!("could not run {what}"))?;
    if !out.status.success() {
        bail!(
            "{what} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Creates database `name` (letters, digits and `_`, starting with a letter) on the server of
/// `admin_url` (any cluster whose URL names a user allowed to create databases); the URL of
/// the new database, as the same user.
pub fn create_database(admin_url: &str, name: &str) -> Result<String> {
    let valid = name.len() <= 63
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if !valid {
        bail!("`{name}` is not a database name of lowercase letters, digits and `_`");
    }
    let target = Target::parse(admin_url)?;
    let mut command = target.command(Binaries::find()?.program("createdb"));
    // A collation other than the cluster's bytewise `C`: the schema declares `COLLATE "C"` on
    // every text column so ids sort bytewise whatever the database's locale, and tests on an
    // ICU `en-US` database are what would catch a column or an ordering missing it.
    command
        .args([
            "--template=template0",
            "--locale-provider=icu",
            "--icu-locale=en-US",
        ])
        .arg("--maintenance-db")
        .arg(&target.database)
        .arg(name);
    run(command, &format!("createdb {name}"))?;
    Ok(target.with_database(name))
}

/// A new database with a unique random name on the server of `admin_url`; its URL.
pub fn fresh_database(admin_url: &str) -> Result<String> {
    create_database(admin_url, &format!("t_{}", random_hex(12)?))
}

/// Runs `sql` with `psql` on the database of `url` (stopping at the first error); the rows
/// as `psql` prints them unaligned and without headers, one per line, columns split by `|`.
pub fn query(url: &str, sql: &str) -> Result<String> {
    let target = Target::parse(url)?;
    let mut command = target.command(Binaries::find()?.program("psql"));
    command
        .args(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d"])
        .arg(&target.database)
        .arg("-c")
        .arg(sql);
    run(command, "psql")
}

/// The admin URL of the shared cluster of this run ([`TEST_POSTGRES_ENV`]), if there is one.
pub fn shared_cluster() -> Option<String> {
    std::env::var_os(TEST_POSTGRES_ENV)
        .map(OsString::into_string)
        .and_then(Result::ok)
        .filter(|url| !url.trim().is_empty())
}

/// A PostgreSQL server for one test, as its admin URL: the run's shared cluster
/// ([`shared_cluster`]), or else one of the test's own, started here and stopped when the
/// returned cluster drops (keep it as long as the test).
pub fn shared_or_own_cluster() -> Result<(Option<Cluster>, String)> {
    if let Some(admin) = shared_cluster() {
        return Ok((None, admin));
    }
    let cluster = Cluster::start().context("starting PostgreSQL")?;
    let admin = cluster.admin_url();
    Ok((Some(cluster), admin))
}

/// The database one test runs on, as the run's environment decides ([`TEST_POSTGRES_ENV`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TestDatabase {
    /// No shared cluster: the test uses SQLite, in memory or in a file of its choice.
    Sqlite,
    /// A database of its own on the shared cluster: its URL.
    Postgres(String),
}

/// The server key every test server gets on PostgreSQL (`--server-key`, 64 hex digits), where
/// there is no data directory for a `server.key` file: the same for every start of a test's
/// server, so a restarted one opens what the first sealed.
pub const TEST_SERVER_KEY: &str =
    "5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e";

impl TestDatabase {
    /// The server key to give the server: [`TEST_SERVER_KEY`] on PostgreSQL, none on SQLite
    /// (which keeps `server.key` beside its file, or an ephemeral key in memory).
    pub fn server_key(&self) -> Option<&'static str> {
        self.is_postgres().then_some(TEST_SERVER_KEY)
    }

    /// Whether this run is on PostgreSQL.
    pub fn is_postgres(&self) -> bool {
        matches!(self, TestDatabase::Postgres(_))
    }

    /// The URL to give the server: the PostgreSQL database, or `sqlite` (the SQLite URL the
    /// test would use on its own, e.g. `sqlite::memory:` or `sqlite://<dir>/tunnel.db`).
    pub fn url_or(&self, sqlite: impl Into<String>) -> String {
        match self {
            TestDatabase::Sqlite => sqlite.into(),
            TestDatabase::Postgres(url) => url.clone(),
        }
    }
}

/// The database for one test: a fresh one on the shared cluster when [`TEST_POSTGRES_ENV`] is
/// set, else [`TestDatabase::Sqlite`]. A test that restarts its server keeps the value and
/// gives every start the same URL.
pub fn test_database() -> Result<TestDatabase> {
    match shared_cluster() {
        Some(admin) => fresh_database(&admin)
            .map(TestDatabase::Postgres)
            .with_context(|| {
                format!("creating a test database on the cluster of {TEST_POSTGRES_ENV}")
            }),
        None => Ok(TestDatabase::Sqlite),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_debians_binaries() {
        let binaries = Binaries::find().unwrap();
        assert!(binaries.version >= 13, "{binaries:?}");
        let version = binaries.server_version().unwrap();
        assert!(version.contains("PostgreSQL"), "{version}");
    }

    #[test]
    fn a_cluster_serves_databases_and_stops_on_drop() {
        let cluster = Cluster::start().unwrap();
        let admin = cluster.admin_url();
        assert!(admin.starts_with("postgres://tunnel:"), "{admin}");
        let first = create_database(&admin, "first_db").unwrap();
        assert!(first.ends_with(&format!(":{}/first_db", cluster.port())));
        let second = fresh_database(&admin).unwrap();
        assert_ne!(first, second);

        // Each database has its own tables.
        query(
            &first,
            "create table t (n int); insert into t values (1), (2)",
        )
        .unwrap();
        assert_eq!(query(&first, "select sum(n) from t").unwrap().trim(), "3");
        let err = query(&second, "select * from t").unwrap_err().to_string();
        assert!(err.contains("does not exist"), "{err}");
        // The test-speed settings, and the server runs as the unprivileged user.
        assert_eq!(query(&first, "show fsync").unwrap().trim(), "off");
        assert_eq!(
            query(&first, "show server_encoding").unwrap().trim(),
            "UTF8"
        );
        let listed = query(&admin, "select datname from pg_database order by 1").unwrap();
        assert!(
            listed.contains("first_db") && listed.contains("t_"),
            "{listed}"
        );

        // A wrong password is refused (scram-sha-256 over TCP, no trust).
        let wrong = admin.replacen(&cluster.password, "wrong", 1);
        assert!(query(&wrong, "select 1").is_err());
        assert!(create_database(&admin, "Bad-Name").is_err());

        let port = cluster.port();
        let dir = cluster.dir.as_ref().unwrap().path().to_path_buf();
        drop(cluster);
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        assert!(
            TcpStream::connect_timeout(&addr, Duration::from_secs(1)).is_err(),
            "the server still listens on {port}"
        );
        assert!(!dir.exists(), "{} was left behind", dir.display());
    }

    #[test]
    fn a_panicking_test_stops_its_cluster() {
        let port = std::thread::spawn(|| {
            let cluster = Cluster::start().unwrap();
            std::panic::panic_any(cluster.port());
        })
        .join()
        .unwrap_err();
        let port = *port.downcast::<u16>().unwrap();
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        assert!(TcpStream::connect_timeout(&addr, Duration::from_secs(1)).is_err());
    }

    #[test]
    fn a_durable_cluster_keeps_the_defaults() {
        let cluster = Cluster::start_durable().unwrap();
        assert_eq!(
            query(&cluster.admin_url(), "show fsync").unwrap().trim(),
            "on"
        );
        let port = cluster.port();
        cluster.stop().unwrap();
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        assert!(TcpStream::connect_timeout(&addr, Duration::from_secs(1)).is_err());
    }

    #[test]
    fn the_server_runs_unprivileged() {
        let cluster = Cluster::start().unwrap();
        let pid = cluster.process.as_ref().unwrap().pid();
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
        let uid: u32 = status
            .lines()
            .find_map(|l| l.strip_prefix("Uid:"))
            .and_then(|l| l.split_whitespace().next())
            .and_then(|u| u.parse().ok())
            .unwrap();
        assert_ne!(uid, 0, "postgres runs as root");
        let me = nix::unistd::geteuid();
        if me.is_root() {
            let postgres = nix::unistd::User::from_name("postgres").unwrap().unwrap();
            assert_eq!(uid, postgres.uid.as_raw());
        } else {
            assert_eq!(uid, me.as_raw());
        }
    }

    #[test]
    fn urls_are_split_for_the_client_programs() {
        let target = Target::parse("postgresql://u%40x:p%2Fw@127.0.0.1:5555/db").unwrap();
        assert_eq!(
            (target.user.as_str(), target.password.as_deref()),
            ("u@x", Some("p/w"))
        );
        assert_eq!((target.port, target.database.as_str()), (5555, "db"));
        assert_eq!(
            target.with_database("other"),
            "postgresql://u%40x:p%2Fw@127.0.0.1:5555/other"
        );
        assert!(Target::parse("sqlite://x.db").is_err());
    }

    #[test]
    fn without_the_variable_tests_use_sqlite() {
        // The variable is read, never set, by the tests: a run with it set is a PostgreSQL run.
        match shared_cluster() {
            None => assert_eq!(test_database().unwrap(), TestDatabase::Sqlite),
            Some(_) => assert!(test_database().unwrap().is_postgres()),
        }
        assert_eq!(
            TestDatabase::Sqlite.url_or("sqlite::memory:"),
            "sqlite::memory:"
        );
        let pg = TestDatabase::Postgres("postgres://a@b/c".into());
        assert_eq!(pg.url_or("sqlite::memory:"), "postgres://a@b/c");
    }
}
