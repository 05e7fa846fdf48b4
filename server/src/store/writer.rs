//! This process's write transactions, committed in groups (docs/database.md, writes).
//!
//! Writes are serialised (one turn at a time, [`Writer::turn`]), and each used to commit on its
//! own: one fsync per write, so under 32 concurrent writers a write mostly waited for the
//! commits queued before it (`POST /api/credentials` p99 37 ms on SQLite). Here the writers that
//! queue while one works share its database transaction, each in a savepoint of its own, and
//! the group commits once:
//!
//! - A writer takes the turn, then the open group if one is parked (`SAVEPOINT`), or begins a
//!   new transaction.
//! - Its work done, it joins the group's members, parks the group and gives up the turn, then
//!   queues for the turn again. Its savepoint stays open: the next member releases it in the
//!   same round trip as it opens its own, or the commit does (on PostgreSQL a round trip is
//!   most of what a statement costs, and writes take turns, so each one saved counts).
//!   Writers already queued go first (the turn is a fair lock) and join the same group.
//!   Whichever member gets the turn back while the group is still parked commits it and tells
//!   every member the outcome. A lone writer gets the turn straight back and commits at once.
//! - A writer that fails (an error, a refused check, a dropped request) rolls back to its
//!   savepoint only; the group goes on without it.
//! - A commit is acknowledged only once the group's `COMMIT` returned: durability is that of a
//!   transaction per write. A failed `COMMIT` fails every member.
//! - Beginning and ending run in tasks of their own, so a request dropped midway (its client
//!   gone) never strands a group: a write begun for it is undone, a group it was to commit is
//!   committed.
//! - On a SQLite file the shared record machinery's writes run in groups of their own, on the
//!   request's thread (`direct_writes.rs`); such a group holds the same turn from its `BEGIN` to
//!   the end of its `COMMIT` ([`Writer::direct_turn`]), so the two kinds never overlap.

use super::exec::Exec;
use super::{Dialect, Result, lock_writes_sql};
use std::borrow::Cow;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::{Notify, OwnedMutexGuard, oneshot};

/// The most writes one group commits: bounds how long one transaction holds the database's
/// write lock (other processes, another node, wait for it).
pub(super) const MAX_GROUP: usize = 64;

/// What a member learns when its group ends: `None` when committed, else why not (the error
/// itself goes to the member that ran the `COMMIT`, the others get its text).
type Outcome = Option<String>;

/// The write turn of this process and the group waiting to commit.
#[derive(Debug, Default)]
pub(super) struct Writer {
    turn: Arc<tokio::sync::Mutex<()>>,
    parked: Mutex<Option<Group>>,
    /// Groups committed, and the writes they held: their ratio is the mean group size
    /// (`--metrics-listen`).
    commits: AtomicU64,
    writes: AtomicU64,
    /// `COMMIT`s begun and ended by this process, of both kinds of writes, failed ones
    /// included: what the row cache stamps its rows with ([`Writer::settled`]).
    commits_begun: AtomicU64,
    commits_ended: AtomicU64,
}

/// A `COMMIT` of this process running ([`Writer::committing`]), until dropped.
pub(super) struct Committing<'a>(&'a Writer);

impl Drop for Committing<'_> {
    fn drop(&mut self) {
        self.0.commits_ended.fetch_add(1, Ordering::SeqCst);
    }
}

/// An open transaction and the writers whose work it holds, waiting for its commit.
#[derive(Debug)]
struct Group {
    tx: sqlx::Transaction<'static, sqlx::Any>,
    members: Vec<oneshot::Sender<Outcome>>,
    /// Whether a member queued a webhook delivery: the commit then wakes the delivery workers.
    queued: bool,
    /// Whether the savepoint of the last member to finish is still open: it is released by the
    /// next member in the same round trip as that member's own opens ([`NEXT_SAVEPOINT`]), or
    /// before the commit, rather than in a round trip of its own.
    held: bool,
}

/// What a member's part of the group begins with; a member that finished leaves its savepoint
/// open ([`Group::held`]), which the next one releases first.
const SAVEPOINT: &str = "SAVEPOINT member";
const NEXT_SAVEPOINT: &str = "RELEASE SAVEPOINT member; SAVEPOINT member";

impl Writer {
    /// Waits for the turn, then joins the parked group or begins one on `pool`.
    pub(super) async fn begin(
        self: &Arc<Writer>,
        pool: &sqlx::AnyPool,
        dialect: Dialect,
        wake: &Arc<Notify>,
    ) -> Result<WriteTx> {
        let task = tokio::spawn(self.clone().join(pool.clone(), dialect, wake.clone()));
        task.await.map_err(ended)?
    }

    async fn join(
        self: Arc<Writer>,
        pool: sqlx::AnyPool,
        dialect: Dialect,
        wake: Arc<Notify>,
    ) -> Result<WriteTx> {
        // Writers queue here first, in order, holding no connection while they wait: readers
        // always find one, and SQLite's busy handler (which sleeps in growing steps) is left
        // only for other processes.
        let turn = self.turn.clone().lock_owned().await;
        let mut parked = self.parked().take();
        // Each step is one round trip: its statements go as one text.
        let group = loop {
            let joining = parked.is_some();
            let (mut group, opening) = match parked.take() {
                Some(group) if group.held => (group, Cow::Borrowed(NEXT_SAVEPOINT)),
                Some(group) => (group, Cow::Borrowed(SAVEPOINT)),
                None => {
                    let tx = pool.begin_with(dialect.begin_write()).await?;
                    // Bounded like SQLite's busy timeout: a lock held elsewhere (another
                    // process) for longer fails this write instead of hanging it.
                    let opening = match lock_writes_sql(dialect, true) {
                        Some(lock) => Cow::Owned(format!("{lock}; {SAVEPOINT}")),
                        None => Cow::Borrowed(SAVEPOINT),
                    };
                    let group = Group {
                        tx,
                        members: Vec::new(),
                        queued: false,
                        held: false,
                    };
                    (group, opening)
                }
            };
            match run(&mut group.tx, opening).await {
                Ok(()) => {
                    group.held = false;
                    break group;
                }
                Err(e) => {
                    group.fail(&e.to_string());
                    // A parked group that fails here failed before this writer (releasing
                    // the last member's savepoint): this writer begins a group of its own.
                    if !joining {
                        return Err(e.into());
                    }
                }
            }
        };
        Ok(WriteTx {
            part: Part::Pooled {
                group: Some(group),
                turn: Some(turn),
                writer: self,
                wake,
            },
            queued: false,
        })
    }

    /// The turn, for a group of direct writes (`super::direct_writes`), which holds it from its
    /// `BEGIN` to the end of its `COMMIT`: a group of pooled writes parked meanwhile commits
    /// first, as any writer of its own would commit it.
    pub(super) async fn direct_turn(self: &Arc<Writer>, wake: &Notify) -> OwnedMutexGuard<()> {
        let turn = self.turn.clone().lock_owned().await;
        let parked = self.parked().take();
        if let Some(group) = parked {
            group.commit(self, wake).await;
        }
        turn
    }

    /// Counts a group committed with `writes` writes.
    pub(super) fn count_commit(&self, writes: usize) {
        self.commits.fetch_add(1, Ordering::Relaxed);
        let writes = u64::try_from(writes).unwrap_or(u64::MAX);
        self.writes.fetch_add(writes, Ordering::Relaxed);
    }

    /// Marks a `COMMIT` as running until the mark drops: from before its changes become
    /// visible to after they are, so that [`Writer::settled`] changes before anyone can read
    /// them. Every `COMMIT` of this process runs under one (both kinds of groups).
    pub(super) fn committing(&self) -> Committing<'_> {
        self.commits_begun.fetch_add(1, Ordering::SeqCst);
        Committing(self)
    }

    /// How many `COMMIT`s this process has begun, when none is running; `None` while one is.
    /// A value read before a read of the database and read again unchanged later means no
    /// commit of this process began in between (`row_cache.rs`).
    pub(super) fn settled(&self) -> Option<u64> {
        let begun = self.commits_begun.load(Ordering::SeqCst);
        (self.commits_ended.load(Ordering::SeqCst) == begun).then_some(begun)
    }

    /// How many groups this process committed, and how many writes they held.
    pub(super) fn committed(&self) -> (u64, u64) {
        (
            self.commits.load(Ordering::Relaxed),
            self.writes.load(Ordering::Relaxed),
        )
    }

    fn parked(&self) -> std::sync::MutexGuard<'_, Option<Group>> {
        self.parked.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Group {
    /// Commits, then tells every member and wakes the delivery workers if a delivery was
    /// queued (after, so they find it). The last member's savepoint is released first: on
    /// PostgreSQL that fails if a statement failed unseen and aborted the transaction, where
    /// a `COMMIT` would roll back and report nothing.
    async fn commit(mut self, writer: &Writer, wake: &Notify) {
        if self.held {
            if let Err(e) = run(&mut self.tx, Cow::Borrowed("RELEASE SAVEPOINT member")).await {
                self.fail(&e.to_string());
                return;
            }
            self.held = false;
        }
        let committing = writer.committing();
        let result = self.tx.commit().await;
        drop(committing);
        if result.is_ok() {
            writer.count_commit(self.members.len());
        }
        let outcome = result.as_ref().err().map(ToString::to_string);
        for member in self.members {
            let _ = member.send(outcome.clone());
        }
        if result.is_ok() && self.queued {
            wake.notify_one();
        }
    }

    /// Ends the group without committing (its transaction rolls back as it drops).
    fn fail(self, why: &str) {
        for member in self.members {
            let _ = member.send(Some(format!("the transaction failed: {why}")));
        }
    }
}

/// A write transaction: the changes, their events and their deliveries commit together
/// (`store::events`). Statements run in it through [`WriteTx::exec`], or, for a pooled one
/// (`Store::write_tx`, inside the write's own savepoint), through the sqlx connection it
/// dereferences to. Dropped without [`WriteTx::commit`], a pooled one's changes are rolled back.
#[derive(Debug)]
pub(crate) struct WriteTx {
    part: Part,
    /// Whether a delivery was queued (set by `store::events`).
    pub(super) queued: bool,
}

#[derive(Debug)]
enum Part {
    /// A member of a group of sqlx transactions ([`Writer::begin`]); the `None`s once it
    /// committed or was abandoned.
    Pooled {
        group: Option<Group>,
        /// This process's write turn, held until the transaction's part ends.
        turn: Option<OwnedMutexGuard<()>>,
        writer: Arc<Writer>,
        wake: Arc<Notify>,
    },
    /// A direct write (`super::direct_writes`): the write connection, lent for the write's
    /// statements, which commit with the direct group that took them.
    Direct(Option<rusqlite::Connection>),
}

impl WriteTx {
    /// Commits this write with its group: returns once the group's `COMMIT` did. A direct
    /// write commits with its group when its work returns (`super::direct_writes`), never here.
    pub(crate) async fn commit(mut self) -> Result<()> {
        let Part::Pooled {
            group,
            turn,
            writer,
            wake,
        } = &mut self.part
        else {
            return Err(ended("a direct write committed by hand"));
        };
        let (Some(group), Some(turn)) = (group.take(), turn.take()) else {
            return Err(ended("a write transaction ended twice"));
        };
        let task = tokio::spawn(finish(
            writer.clone(),
            wake.clone(),
            group,
            turn,
            self.queued,
        ));
        task.await.map_err(ended)?
    }

    /// Where this write's statements run; the shared record machinery (`records.rs`) and the
    /// audit log write through this, so they serve direct and pooled writes alike.
    pub(super) fn exec(&mut self) -> Exec<'_> {
        match &mut self.part {
            Part::Pooled {
                group: Some(group), ..
            } => Exec::Sqlx(&mut group.tx),
            Part::Direct(Some(conn)) => Exec::Direct(conn),
            _ => panic!("{ENDED}"),
        }
    }

    /// A direct write in `conn`, already inside the write's savepoint.
    pub(super) fn direct(conn: rusqlite::Connection) -> WriteTx {
        WriteTx {
            part: Part::Direct(Some(conn)),
            queued: false,
        }
    }

    /// A direct write's connection back, and whether it queued a delivery.
    pub(super) fn into_direct(mut self) -> (Option<rusqlite::Connection>, bool) {
        match &mut self.part {
            Part::Direct(conn) => (conn.take(), self.queued),
            Part::Pooled { .. } => (None, self.queued),
        }
    }
}

/// A `WriteTx` used after it ended: a bug of the store.
const ENDED: &str = "a WriteTx holds its transaction until it ends";

/// Runs `sql` in the group's transaction. Boxed as `Send` for the tasks: the compiler cannot
/// prove sqlx's executor futures `Send` for every lifetime inside `tokio::spawn` otherwise.
/// Statements separated by `;` go in one round trip (a simple query).
fn run<'c>(
    tx: &'c mut sqlx::Transaction<'static, sqlx::Any>,
    sql: Cow<'static, str>,
) -> futures_util::future::BoxFuture<'c, Result<(), sqlx::Error>> {
    use sqlx::Executor as _;
    let conn: &'c mut sqlx::AnyConnection = tx;
    Box::pin(async move {
        conn.execute(&*sql).await?;
        Ok(())
    })
}

/// The error of a write whose group ended without telling it the outcome.
fn ended(why: impl std::fmt::Display) -> super::Error {
    sqlx::Error::Protocol(format!(
        "the write transaction ended without an outcome: {why}"
    ))
    .into()
}

/// [`WriteTx::commit`]'s work, in a task of its own.
async fn finish(
    writer: Arc<Writer>,
    wake: Arc<Notify>,
    mut group: Group,
    turn: OwnedMutexGuard<()>,
    queued: bool,
) -> Result<()> {
    // This write's savepoint stays open: the next member, or the commit, releases it.
    group.held = true;
    group.queued |= queued;
    let (sender, mut outcome) = oneshot::channel();
    group.members.push(sender);
    if group.members.len() >= MAX_GROUP {
        group.commit(&writer, &wake).await;
        return settle(outcome.await);
    }
    *writer.parked() = Some(group);
    drop(turn);
    {
        let outcome = tokio::select! {
            biased;
            outcome = &mut outcome => outcome,
            turn = writer.turn.clone().lock_owned() => {
                // The group is parked still unless it ended while this writer waited (then the
                // outcome is here): nobody else holds it while this writer has the turn.
                match outcome.try_recv() {
                    Ok(done) => Ok(done),
                    Err(_) => {
                        let parked = writer.parked().take();
                        if let Some(group) = parked {
                            // Every member, this one too, learns the outcome from the group.
                            group.commit(&writer, &wake).await;
                        }
                        drop(turn);
                        outcome.await
                    }
                }
            }
        };
        settle(outcome)
    }
}

/// What a member's outcome means for its caller.
fn settle(outcome: Result<Outcome, oneshot::error::RecvError>) -> Result<()> {
    match outcome {
        Ok(None) => Ok(()),
        Ok(Some(why)) => Err(sqlx::Error::Protocol(why).into()),
        Err(e) => Err(ended(e)),
    }
}

impl Drop for WriteTx {
    /// Not committed: undo this write's part (its savepoint) and hand the group on, in a task
    /// that holds the turn until done. Without a runtime the whole transaction rolls back and
    /// the members learn that it ended without an outcome.
    fn drop(&mut self) {
        // A direct write's connection is taken back by `super::direct_writes`; dropped here
        // (the write panicked), it closes, and its open transaction rolls back with it.
        let Part::Pooled {
            group,
            turn,
            writer,
            ..
        } = &mut self.part
        else {
            return;
        };
        let (Some(group), Some(turn)) = (group.take(), turn.take()) else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let writer = writer.clone();
        runtime.spawn(async move {
            let mut group = group;
            let undone = run(
                &mut group.tx,
                Cow::Borrowed("ROLLBACK TO SAVEPOINT member; RELEASE SAVEPOINT member"),
            )
            .await;
            match undone {
                Err(e) => group.fail(&e.to_string()),
                // A member still waits: it commits the group when its turn comes.
                Ok(_) if !group.members.is_empty() => *writer.parked() = Some(group),
                // Nothing else in it: the transaction rolls back as it drops.
                Ok(_) => {}
            }
            drop(turn);
        });
    }
}

/// The sqlx connection of a pooled write (`Store::write_tx`): what area code that speaks sqlx
/// runs its statements in. A direct write has none; asking is a bug of the store.
impl std::ops::Deref for WriteTx {
    type Target = sqlx::AnyConnection;
    fn deref(&self) -> &sqlx::AnyConnection {
        match &self.part {
            Part::Pooled {
                group: Some(group), ..
            } => &group.tx,
            _ => panic!("{ENDED}, and only a pooled one has a sqlx connection"),
        }
    }
}

impl std::ops::DerefMut for WriteTx {
    fn deref_mut(&mut self) -> &mut sqlx::AnyConnection {
        match &mut self.part {
            Part::Pooled {
                group: Some(group), ..
            } => &mut group.tx,
            _ => panic!("{ENDED}, and only a pooled one has a sqlx connection"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{DatabaseUrl, Store};
    use std::time::Duration;

    async fn store(dir: &tempfile::TempDir) -> Store {
        let store = Store::open(&DatabaseUrl::SqliteFile(dir.path().join("t.db")))
            .await
            .unwrap();
        sqlx::raw_sql("CREATE TABLE scratch (n INTEGER)")
            .execute(&store.pool)
            .await
            .unwrap();
        store
    }

    async fn insert(tx: &mut super::WriteTx, n: i64) {
        sqlx::query("INSERT INTO scratch (n) VALUES ($1)")
            .bind(n)
            .execute(&mut **tx)
            .await
            .unwrap();
    }

    async fn rows(store: &Store) -> Vec<i64> {
        sqlx::query_scalar("SELECT n FROM scratch ORDER BY n")
            .fetch_all(&store.pool)
            .await
            .unwrap()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn dropped_requests_never_strand_a_group() {
        let dir = tempfile::tempdir().unwrap();
        let store = store(&dir).await;
        let mut first = store.write_tx().await.unwrap();
        insert(&mut first, 1).await;

        // A writer whose request is dropped while it waits for the turn.
        let gone = tokio::spawn({
            let store = store.clone();
            async move {
                let mut tx = store.write_tx().await.unwrap();
                insert(&mut tx, 2).await;
                tx.commit().await
            }
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        gone.abort();

        // A writer that joins the first one's group once that one parks it, then fails.
        let (joined, has_joined) = tokio::sync::oneshot::channel();
        let (go, may_go) = tokio::sync::oneshot::channel::<()>();
        let second = tokio::spawn({
            let store = store.clone();
            async move {
                let mut tx = store.write_tx().await.unwrap();
                joined.send(()).unwrap();
                may_go.await.unwrap();
                insert(&mut tx, 5).await;
            }
        });
        // The first commits; its request is dropped while its group waits for the second.
        let committing = tokio::spawn(async move { first.commit().await });
        has_joined.await.unwrap();
        committing.abort();
        go.send(()).unwrap();
        second.await.unwrap();
        // The first's write commits all the same, with no other writer coming to do it.
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while rows(&store).await != [1] {
            assert!(
                tokio::time::Instant::now() < deadline,
                "the group was stranded"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }

        // Nothing stranded: a later write goes through.
        let later = async {
            let mut tx = store.write_tx().await.unwrap();
            insert(&mut tx, 7).await;
            tx.commit().await
        };
        tokio::time::timeout(Duration::from_secs(10), later)
            .await
            .expect("the turn is free")
            .unwrap();
        assert_eq!(rows(&store).await, vec![1, 7]);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn queued_writes_commit_together() {
        let dir = tempfile::tempdir().unwrap();
        let store = store(&dir).await;
        let holder = store.write_tx().await.unwrap();
        let writers: Vec<_> = (0..20)
            .map(|n| {
                let store = store.clone();
                tokio::spawn(async move {
                    let mut tx = store.write_tx().await.unwrap();
                    insert(&mut tx, n).await;
                    if n % 4 == 3 {
                        drop(tx); // refused: undone alone
                        return Ok(());
                    }
                    tx.commit().await
                })
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(100)).await;
        let (commits_before, writes_before) = store.writer.committed();
        holder.commit().await.unwrap();
        for writer in writers {
            writer.await.unwrap().unwrap();
        }
        let kept: Vec<i64> = (0..20).filter(|n| n % 4 != 3).collect();
        assert_eq!(rows(&store).await, kept);
        // 21 writes queued behind one: far fewer commits than writes.
        let (commits, writes) = store.writer.committed();
        // The holder and the 15 writers that kept theirs.
        assert_eq!(writes - writes_before, 16);
        let commits = commits - commits_before;
        assert!(commits <= 3, "{commits} commits for 16 writes");
    }
}
