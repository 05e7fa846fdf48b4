//! The commands of the binary (docs/command-line.md, docs/accounts.md): `serve`, and the
//! operator commands that work on the same database (`account create`, `account list`,
//! `user create`, `user rename`, `user role`, `user remove`, `user list`, the hidden `dev
//! seed-credentials`). `main.rs` only parses the command line and calls these.

use crate::config::ServeOptions;
use crate::secret::Secret;
use crate::state::AppState;
use crate::store::{DatabaseUrl, PageQuery, Principal, Store};
use anyhow::Context as _;
use serde_json::json;
use std::net::SocketAddr;
use tunnel_core::ids::IdKind;

/// Runs the server until Ctrl-C / SIGTERM.
pub async fn serve(opts: ServeOptions) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind(opts.listen)
        .await
        .with_context(|| format!("cannot listen on {}", opts.listen))?;
    let listen = listener.local_addr()?;
    let metrics = bind_optional(opts.metrics_listen, "--metrics-listen").await?;
    let api_alone = bind_optional(opts.api_listen, "--api-listen").await?;
    let config = opts.config(listen)?;
    if let Some(dir) = &config.console_dir
        && !dir.join("index.html").is_file()
    {
        tracing::warn!(dir = %dir.display(), "--console-dir has no index.html; the console will not load");
    }
    // Before the database is opened: joining the cluster would end the sessions of a server
    // already serving this SQLite file. Held until the server has stopped.
    let _claim = config.database.claim()?;
    let state = AppState::open(config).await?;
    crate::retention::spawn(state.store.clone(), state.config.event_retention);
    bootstrap(
        &state.store,
        opts.bootstrap_api_key.as_ref().map(Secret::expose),
    )
    .await?;
    // At the signal, the webhook worker and the API-alone listener stop with the main one;
    // the store closes only once both have ended.
    let (stopping, stop) = tokio::sync::watch::channel(false);
    let deliveries = crate::api::event_destinations::spawn_deliveries(&state, stop.clone());
    tracing::info!(%listen, base_url = %state.config.public_url, "tunnel-server listening");
    if let Some(metrics) = metrics {
        tracing::info!(addr = %metrics.local_addr()?, "metrics listening");
        let router = crate::metrics::router(state.clone());
        tokio::spawn(async move {
            if let Err(e) = axum::serve(metrics, router).await {
                tracing::error!(error = %e, "the metrics listener stopped");
            }
        });
    }
    let api_alone = match api_alone {
        Some(listener) => {
            tracing::info!(addr = %listener.local_addr()?, "the API alone listening at the root");
            let router = crate::api_alone(state.clone());
            let mut stop = stop.clone();
            Some(tokio::spawn(crate::serve::run(
                listener,
                router,
                async move {
                    let _ = stop.wait_for(|stop| *stop).await;
                },
                false,
            )))
        }
        None => None,
    };
    let app = crate::app(state.clone());
    crate::serve::run(
        listener,
        app,
        leave_on_shutdown(state.clone(), stopping),
        true,
    )
    .await;
    if let Some(task) = api_alone {
        task.await.context("the --api-listen listener's task")?;
    }
    // The sends in flight at the signal have recorded their attempts (bounded by the webhook
    // timeout): nothing is sent twice, and `depart` frees what is left.
    if let Err(e) = deliveries.await {
        tracing::warn!("the webhook worker ended badly: {e}");
    }
    let displaced = state.node.was_displaced();
    let last_steps = async {
        // The requests still running have finished: let the agents' connection tasks (told to
        // end at the signal) finish before the pool closes, so none writes to a closed pool.
        if !state.registry.connections_done(AGENTS_CLOSE_WAIT).await {
            tracing::warn!("some agent connections did not close in time");
        }
        // A node whose id another server took has no row of its own to remove.
        if !displaced {
            state.node.depart(&state.store).await;
        }
        state.store.close().await;
    };
    // Each of these writes to the database; with the database out of reach each would wait for
    // a connection in turn (10 s for every agent's session end). What they do not write, the
    // node's lease ends for it, as after a crash.
    if tokio::time::timeout(LAST_STEPS_WAIT, last_steps)
        .await
        .is_err()
    {
        tracing::warn!(
            "the database did not take this node's last writes within {} s; stopping without them (its lease ends its sessions)",
            LAST_STEPS_WAIT.as_secs()
        );
    }
    anyhow::ensure!(
        !displaced,
        "another server joined the cluster as --node-id {}; this one stopped (give each server its own --node-id)",
        state.node.id
    );
    Ok(())
}

/// Binds an optional listener of `flag`.
async fn bind_optional(
    addr: Option<SocketAddr>,
    flag: &str,
) -> anyhow::Result<Option<tokio::net::TcpListener>> {
    match addr {
        Some(addr) => Ok(Some(
            tokio::net::TcpListener::bind(addr)
                .await
                .with_context(|| format!("cannot listen on {addr} ({flag})"))?,
        )),
        None => Ok(None),
    }
}

/// How long shutdown waits for the agent connections to close: each sends the agent a Close
/// frame, bounded by the channel's send time limit, so this is reached only by a stuck peer.
const AGENTS_CLOSE_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// How long the steps after the listeners stopped (the agents' connections, leaving the
/// cluster, closing the database) may take together.
const LAST_STEPS_WAIT: std::time::Duration = std::time::Duration::from_secs(20);

/// Waits for Ctrl-C / SIGTERM, then leaves the cluster and closes the agents' connections: this
/// node's sessions leave every list at once rather than when its lease would end, and its
/// agents reconnect through another node (docs/cluster.md) at once, not once the requests
/// still running (a webhook test waiting for a slow receiver) have finished, which the
/// graceful shutdown then waits for.
///
/// The same when another server took this node's id over (`Node::was_displaced`): it ends with
/// an error saying so, rather than keep taking agents it cannot keep.
async fn leave_on_shutdown(
    state: crate::state::AppState,
    stopping: tokio::sync::watch::Sender<bool>,
) {
    let displaced = tokio::select! {
        () = crate::serve::signals(1) => {
            tracing::info!("shutting down");
            false
        }
        () = state.node.displaced() => true,
    };
    // First of all: the webhook worker claims nothing more, the API-alone listener closes.
    stopping.send_replace(true);
    if displaced {
        state.node.step_aside();
    } else {
        state.node.leave(&state.store).await;
    }
    state.node.end_connections();
}

/// docs/accounts.md: with a bootstrap key, make sure an admin holds exactly it; otherwise, on an empty
/// database, create the default account and print its admin key once.
pub async fn bootstrap(store: &Store, bootstrap_api_key: Option<&str>) -> anyhow::Result<()> {
    if let Some(key) = bootstrap_api_key.map(str::trim).filter(|k| !k.is_empty()) {
        anyhow::ensure!(
            key.len() >= 16 && key.len() <= 200 && key.bytes().all(|b| b.is_ascii_graphic()),
            "--bootstrap-api-key (TUNNEL_BOOTSTRAP_API_KEY) must be 16 to 200 printable characters without spaces"
        );
        if store.ensure_bootstrap_key(key).await? {
            tracing::info!("bootstrap API key installed for an admin of the default account");
        }
        return Ok(());
    }
    if let Some(created) = store
        .create_first_account(crate::store::DEFAULT_ACCOUNT_NAME)
        .await?
    {
        // Printed once, on purpose, to stdout (not through the logger): the operator needs it.
        print(&format!(
            "\n==================== tunnel-server first start ====================\n\
             Created account {} with admin user {}.\n\
             Admin API key (shown only now; keep it safe):\n\n    {}\n\n\
             Use it as `Authorization: Bearer <key>` or to sign in to the console.\n\
             Name the user: tunnel-server user rename --id {} --name NAME (and the server's --database)\n\
             ===================================================================\n\n",
            created.account_id, created.principal_id, created.api_key, created.principal_id
        ))
        .with_context(|| {
            format!(
                "cannot write the first admin API key to stdout; make another with \
                 `tunnel-server user create --account {} --name NAME --admin`",
                created.account_id
            )
        })?;
    }
    Ok(())
}

/// Writes `text` to stdout, saying when it could not (a full disk, a reader gone): `println!`
/// would panic.
pub fn print(text: &str) -> anyhow::Result<()> {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

async fn open(database: &str) -> anyhow::Result<Store> {
    Store::open(&DatabaseUrl::parse(database)?).await
}

/// `migrate --from URL --to URL`: `{"from","to","moved":{table: rows},"total","next"}` (the
/// URLs without their passwords; `next` says how to start on the new database).
pub async fn migrate(from: &str, to: &str) -> anyhow::Result<serde_json::Value> {
    let (from, to) = (DatabaseUrl::parse(from)?, DatabaseUrl::parse(to)?);
    anyhow::ensure!(from != to, "--from and --to name the same database");
    anyhow::ensure!(
        to != DatabaseUrl::SqliteMemory && from != DatabaseUrl::SqliteMemory,
        "an in-memory database cannot be moved from or to"
    );
    let source = Store::open_existing(&from).await?;
    anyhow::ensure!(
        !source.list_accounts().await?.is_empty(),
        "the database {} holds no account: there is nothing to move",
        from.redacted()
    );
    let target = Store::open(&to).await?;
    let moved = source.copy_into(&target).await;
    source.close().await;
    target.close().await;
    let moved = moved?;
    let total: u64 = moved.iter().map(|(_, n)| n).sum();
    // The key file is named only where it is: a source served with `--server-key` has none.
    let key_file = from
        .data_dir()
        .map(|dir| dir.join(crate::keys::SERVER_KEY_FILE))
        .filter(|file| file.is_file());
    let key_note = match key_file {
        Some(file) => format!(
            "start the server on the new database with the same server key: \
             TUNNEL_SERVER_KEY=$(cat {})",
            file.display()
        ),
        None => "start the server on the new database with the server key the old one was \
                 started with (--server-key or TUNNEL_SERVER_KEY)"
            .to_owned(),
    };
    tracing::info!(total, from = %from.redacted(), to = %to.redacted(), "moved the installation");
    Ok(json!({
        "from": from.redacted(),
        "to": to.redacted(),
        "moved": moved.into_iter().map(|(t, n)| (t.to_owned(), json!(n))).collect::<serde_json::Map<_, _>>(),
        "total": total,
        "next": key_note,
    }))
}

/// `account create [--name N] [--admin-name NAME]`: `{"account_id","user_id","api_key"}`.
pub async fn account_create(
    database: &str,
    name: Option<&str>,
    admin_name: Option<&str>,
) -> anyhow::Result<serde_json::Value> {
    let admin_name = user_name("--admin-name", admin_name.unwrap_or_default())?;
    let name = match name {
        Some(name) => checked_name("--name", name, tunnel_core::limits::ACCOUNT_NAME)?,
        None => crate::store::DEFAULT_ACCOUNT_NAME.to_owned(),
    };
    // Unlike a user, an account always has a name: an empty one would leave the top bar blank.
    anyhow::ensure!(
        !name.is_empty(),
        "--name: an account's name cannot be empty (without --name it is `{}`)",
        crate::store::DEFAULT_ACCOUNT_NAME
    );
    let store = open(database).await?;
    let created = store.create_account(&name, &admin_name).await?;
    store.close().await;
    Ok(
        json!({"account_id": created.account_id, "user_id": created.principal_id, "api_key": created.api_key}),
    )
}

/// `account list`: `[{"account_id","name"}]`.
pub async fn account_list(database: &str) -> anyhow::Result<serde_json::Value> {
    let store = open(database).await?;
    let accounts = store.list_accounts().await?;
    store.close().await;
    Ok(accounts
        .into_iter()
        .map(|(id, name)| json!({"account_id": id, "name": name}))
        .collect())
}

/// `user create --account ID [--name NAME] [--admin] [--bot]`: `{"user_id","api_key"}`.
pub async fn user_create(
    database: &str,
    account: &str,
    name: &str,
    admin: bool,
    bot: bool,
) -> anyhow::Result<serde_json::Value> {
    let name = user_name("--name", name)?;
    let principal = Principal {
        kind: if bot { IdKind::Bot } else { IdKind::User },
        name: &name,
        admin,
    };
    let store = open(database).await?;
    let created = store.create_principal(account, &principal).await?;
    store.close().await;
    let created = created
        .with_context(|| format!("no account `{account}` (see `tunnel-server account list`)"))?;
    Ok(json!({"user_id": created.principal_id, "api_key": created.api_key}))
}

/// `user rename --id ID --name NAME`: `{"user_id","name"}`.
pub async fn user_rename(
    database: &str,
    id: &str,
    name: &str,
) -> anyhow::Result<serde_json::Value> {
    let name = user_name("--name", name)?;
    let store = open(database).await?;
    let renamed = store.rename_principal(id, &name).await;
    store.close().await;
    anyhow::ensure!(
        renamed?,
        "no user or bot `{id}` (see `tunnel-server user list --account ID`)"
    );
    Ok(json!({"user_id": id, "name": name}))
}

/// `user role --id ID --role admin|member`: `{"user_id","is_admin"}`.
pub async fn user_role(database: &str, id: &str, admin: bool) -> anyhow::Result<serde_json::Value> {
    use crate::store::RoleChange;
    let store = open(database).await?;
    let changed = store.set_principal_admin(id, admin).await;
    store.close().await;
    match changed? {
        RoleChange::Done => Ok(json!({"user_id": id, "is_admin": admin})),
        RoleChange::NoSuch => {
            anyhow::bail!("no user or bot `{id}` (see `tunnel-server user list --account ID`)")
        }
        RoleChange::LastAdmin => anyhow::bail!(
            "`{id}` is the last admin of its account: make another user admin first \
             (`tunnel-server user role --id ID --role admin`)"
        ),
    }
}

/// `user remove --id ID [--to ID]`: `{"user_id","api_keys_deleted","credentials_moved"}`.
pub async fn user_remove(
    database: &str,
    id: &str,
    to: Option<&str>,
) -> anyhow::Result<serde_json::Value> {
    use crate::store::Removal;
    let store = open(database).await?;
    let removed = store.remove_principal(id, to).await;
    store.close().await;
    match removed? {
        Removal::Done {
            api_keys,
            credentials,
        } => Ok(json!({
            "user_id": id,
            "api_keys_deleted": api_keys,
            "credentials_moved": credentials,
        })),
        Removal::NoSuch => {
            anyhow::bail!("no user or bot `{id}` (see `tunnel-server user list --account ID`)")
        }
        Removal::LastAdmin => anyhow::bail!(
            "`{id}` is the last admin of its account: make another user admin first \
             (`tunnel-server user role --id ID --role admin`)"
        ),
        Removal::OwnsCredentials(n) => anyhow::bail!(
            "`{id}` owns {n} credential(s), which agents may be using: name who takes them over \
             with --to ID (another user or bot of the account), or delete them first"
        ),
        Removal::NoHeir => anyhow::bail!(
            "--to: `{}` is not another user or bot of `{id}`'s account",
            to.unwrap_or_default()
        ),
    }
}

/// `user list --account ID`: `[{"user_id","name","kind","is_admin"}]`, users then bots, newest
/// first.
pub async fn user_list(database: &str, account: &str) -> anyhow::Result<serde_json::Value> {
    let store = open(database).await?;
    let listed = async {
        anyhow::ensure!(
            store.account_name(account).await?.is_some(),
            "no account `{account}` (see `tunnel-server account list`)"
        );
        let mut page = PageQuery {
            limit: 500,
            before_id: None,
            q: None,
            oldest_first: false,
        };
        let mut users = Vec::new();
        loop {
            let mut rows = store.list_users(account, &page).await?;
            let more = rows.len() > page.limit as usize;
            rows.truncate(page.limit as usize);
            page.before_id = rows.last().map(|u| u.id.clone());
            users.extend(rows.into_iter().map(|u| {
                let kind = u.kind();
                json!({"user_id": u.id, "name": u.name, "kind": kind, "is_admin": u.is_admin})
            }));
            if !more {
                return Ok(serde_json::Value::Array(users));
            }
        }
    }
    .await;
    store.close().await;
    listed
}

/// A name for a user or bot as given on the command line: see [`checked_name`].
fn user_name(flag: &str, name: &str) -> anyhow::Result<String> {
    checked_name(flag, name, tunnel_core::limits::USER_NAME)
}

/// A name as given on the command line: trimmed, within `limit`, no control characters (it is
/// shown in the console).
fn checked_name(
    flag: &str,
    name: &str,
    limit: tunnel_core::limits::TextLimit,
) -> anyhow::Result<String> {
    let name = name.trim();
    if let Some(error) = limit.check(name) {
        anyhow::bail!("{flag}: {}", error.message);
    }
    anyhow::ensure!(
        !name.chars().any(char::is_control),
        "{flag}: a name cannot hold control characters"
    );
    Ok(name.to_owned())
}

/// `dev seed-credentials --account ID --count N` (hidden; for `cargo xtask bench`): bulk-loads
/// `count` credentials owned by the account's admin; prints
/// `{"account_id","inserted","seconds","middle_id","deep_id"}` (ids to page from).
pub async fn seed_credentials(
    database: &str,
    account: &str,
    count: u64,
) -> anyhow::Result<serde_json::Value> {
    let store = open(database).await?;
    let started = std::time::Instant::now();
    let seeded = store.seed_credentials(account, count).await?;
    store.close().await;
    let seeded =
        seeded.with_context(|| format!("account `{account}` does not exist or has no admin"))?;
    Ok(json!({
        "account_id": account,
        "inserted": seeded.inserted,
        "seconds": started.elapsed().as_secs_f64(),
        "middle_id": seeded.middle_id,
        "deep_id": seeded.deep_id,
    }))
}
