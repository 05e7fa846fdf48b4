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
//! - A write of the shared record machinery (`Store::write`, whose statements all go through
//!   [`WriteTx::exec`]) opens no savepoint of its own ([`Undo::Group`]): on PostgreSQL that is
//!   one round trip fewer per write, inside the turn. It runs in the savepoint the group
//!   already holds open. Such a write refuses before it changes anything; one that ends without
//!   committing after a change, a failed statement or a statement left unanswered (its request
//!   gone) fails its whole group, every member told, as a direct group on a SQLite file does.
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
    /// Whether a savepoint is open that no member is working in: the last member's to finish
    /// (or the one that writes without a savepoint ran in, [`Undo::Group`]). It is released by
    /// the next member in the same round trip as that member's own opens ([`NEXT_SAVEPOINT`]),
    /// or before the commit, rather than in a round trip of its own.
    held: bool,
}

/// How a write that ends without committing is undone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Undo {
    /// Rolled back to a savepoint of its own; the group goes on without it.
    Savepoint,
    /// With its whole group, unless it only read ([`Exec::Marked`]): for writes whose
    /// statements all go through [`WriteTx::exec`] and that refuse before they change anything.
    Group,
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
        undo: Undo,
    ) -> Result<WriteTx> {
        let task = tokio::spawn(self.clone().join(pool.clone(), dialect, wake.clone(), undo));
        task.await.map_err(ended)?
    }

    async fn join(
        self: Arc<Writer>,
        pool: sqlx::AnyPool,
        dialect: Dialect,
        wake: Arc<Notify>,
        undo: Undo,
    ) -> Result<WriteTx> {
        // Writers queue here first, in order, holding no connection while they wait: readers
        // always find one, and SQLite's busy handler (which sleeps in growing steps) is left
        // only for other processes.
        let turn = self.turn.clone().lock_owned().await;
        let mut parked = self.parked().take();
        // Each step is one round trip (or none): its statements go as one text.
        let group = loop {
            let joining = parked.is_some();
            let (mut group, opening) = match parked.take() {
                // Nothing to send: this write runs in the savepoint the group holds open.
                Some(group) if group.held && undo == Undo::Group => (group, None),
                Some(group) if group.held => (group, Some(Cow::Borrowed(NEXT_SAVEPOINT))),
                Some(group) => (group, Some(Cow::Borrowed(SAVEPOINT))),
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
                    (group, Some(opening))
                }
            };
            let opened = match opening {
                Some(opening) => run(&mut group.tx, opening).await,
                None => Ok(()),
            };
            match opened {
                Ok(()) => {
                    // A write with a savepoint of its own works in it until it finishes; one
                    // without works in the savepoint now open, which stays the group's.
                    group.held = undo == Undo::Group;
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
                undo,
                marked: false,
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
        undo: Undo,
        /// With [`Undo::Group`]: whether this write may have left something in the transaction
        /// (kept by [`Exec::Marked`]).
        marked: bool,
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
            ..
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
                group: Some(group),
                undo,
                marked,
                ..
            } => match undo {
                Undo::Group => Exec::Marked(&mut group.tx, marked),
                Undo::Savepoint => Exec::Sqlx(&mut group.tx),
            },
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

/// The sqlx connection of a write without a savepoint asked for: a bug of the store.
const UNMARKED: &str = "a write without a savepoint of its own runs its statements through \
                        WriteTx::exec only";

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
    /// that holds the turn until done; a write without a savepoint that only read leaves
    /// nothing to undo, one that may have left more fails the group ([`Undo::Group`]). Without
    /// a runtime the whole transaction rolls back and the members learn that it ended without
    /// an outcome.
    fn drop(&mut self) {
        // A direct write's connection is taken back by `super::direct_writes`; dropped here
        // (the write panicked), it closes, and its open transaction rolls back with it.
        let Part::Pooled {
            group,
            turn,
            writer,
            undo,
            marked,
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
        let (undo, marked) = (*undo, *marked);
        runtime.spawn(async move {
            let mut group = group;
            let undone = match undo {
                Undo::Savepoint => run(
                    &mut group.tx,
                    Cow::Borrowed("ROLLBACK TO SAVEPOINT member; RELEASE SAVEPOINT member"),
                )
                .await
                .map_err(|e| e.to_string()),
                // Only reads, each answered: nothing of this write is in the transaction.
                Undo::Group if !marked => Ok(()),
                Undo::Group => {
                    Err("a write of the group failed or was abandoned after it began".to_owned())
                }
            };
            match undone {
                Err(why) => group.fail(&why),
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
            // Statements there would escape its mark (`Exec::Marked`).
            Part::Pooled {
                undo: Undo::Group, ..
            } => panic!("{UNMARKED}"),
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
            // Statements there would escape its mark (`Exec::Marked`).
            Part::Pooled {
                undo: Undo::Group, ..
            } => panic!("{UNMARKED}"),
            Part::Pooled {
                group: Some(group), ..
            } => &mut group.tx,
            _ => panic!("{ENDED}, and only a pooled one has a sqlx connection"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::columns::Value;
    use super::super::{DatabaseUrl, Store};
    use std::time::Duration;

    async fn store(dir: &tempfile::TempDir) -> Store {
        with_scratch(Store::open(&DatabaseUrl::SqliteFile(dir.path().join("t.db"))).await).await
    }

    async fn with_scratch(store: anyhow::Result<Store>) -> Store {
        let store = store.unwrap();
        sqlx::raw_sql("CREATE TABLE scratch (n BIGINT)")
            .execute(&store.pool)
            .await
            .unwrap();
        store
    }

    /// A store on a fresh database of the run's PostgreSQL cluster, or of a cluster of the
    /// test's own (returned, so it lives as long as the test).
    async fn postgres_store() -> (Option<tunnel_testkit::postgres::Cluster>, Store) {
        use tunnel_testkit::postgres::{fresh_database, shared_or_own_cluster};
        let (cluster, admin) = shared_or_own_cluster().unwrap();
        let url = DatabaseUrl::parse(&fresh_database(&admin).unwrap()).unwrap();
        (cluster, with_scratch(Store::open(&url).await).await)
    }

    /// A write without a savepoint of its own, as `Store::write` begins one.
    async fn marked_write(store: &Store) -> super::WriteTx {
        store.write_tx_undone(super::Undo::Group).await.unwrap()
    }

    const INSERT: &str = "INSERT INTO scratch (n) VALUES ($1)";

    async fn put(tx: &mut super::WriteTx, sql: &str, n: i64) -> super::Result<u64> {
        tx.exec().execute(sql, &[Value::Integer(n)]).await
    }

    async fn insert(tx: &mut super::WriteTx, n: i64) {
        put(tx, INSERT, n).await.unwrap();
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

    /// Each writer is spawned once the one before it queues for the turn, so they join the
    /// group in this order.
    async fn queue<F: Future<Output = T> + Send + 'static, T: Send + 'static>(
        work: F,
    ) -> tokio::task::JoinHandle<T> {
        let task = tokio::spawn(work);
        tokio::time::sleep(Duration::from_millis(50)).await;
        task
    }

    /// Writes without a savepoint (`Undo::Group`) in a group with one that has its own: one
    /// that only read and refused leaves the group as it was; one that changed something, or
    /// whose statement failed, and then ended without committing fails the whole group, and
    /// nothing of that group is committed; the writer after it begins a new one.
    async fn writes_without_a_savepoint_are_undone_with_their_group(store: Store) {
        let holder = async |n: i64| {
            let mut tx = store.write_tx().await.unwrap();
            insert(&mut tx, n).await;
            tx
        };

        // A refusal after a read, then a write that commits, both with the holder's group.
        let first = holder(1).await;
        let refused = queue({
            let store = store.clone();
            async move {
                let mut tx = marked_write(&store).await;
                let mut exec = tx.exec();
                let read = exec.fetch("SELECT n FROM scratch", &[], |row| row.integer("n"));
                assert_eq!(read.await.unwrap(), vec![Some(1)]);
            }
        })
        .await;
        let kept = queue({
            let store = store.clone();
            async move {
                let mut tx = marked_write(&store).await;
                put(&mut tx, INSERT, 2).await.unwrap();
                tx.commit().await
            }
        })
        .await;
        first.commit().await.unwrap();
        refused.await.unwrap();
        kept.await.unwrap().unwrap();
        assert_eq!(rows(&store).await, vec![1, 2]);

        // A write abandoned after its change, and one whose statement failed: each takes its
        // group down with it; the write queued after each commits in a group of its own.
        for (n, sql) in [
            (3, INSERT),
            (5, "INSERT INTO no_such_table (n) VALUES ($1)"),
        ] {
            let holder = holder(n).await;
            let failing = queue({
                let store = store.clone();
                let sql = sql.to_owned();
                async move {
                    let mut tx = marked_write(&store).await;
                    let _ = put(&mut tx, &sql, 100 + n).await;
                }
            })
            .await;
            let after = queue({
                let store = store.clone();
                async move {
                    let mut tx = marked_write(&store).await;
                    put(&mut tx, INSERT, n + 1).await.unwrap();
                    tx.commit().await
                }
            })
            .await;
            let failed = holder.commit().await.unwrap_err().to_string();
            assert!(failed.contains("failed or was abandoned"), "{failed}");
            failing.await.unwrap();
            after.await.unwrap().unwrap();
        }
        assert_eq!(rows(&store).await, vec![1, 2, 4, 6]);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn writes_without_a_savepoint_on_sqlite() {
        let dir = tempfile::tempdir().unwrap();
        writes_without_a_savepoint_are_undone_with_their_group(store(&dir).await).await;
    }

    /// On PostgreSQL a failed statement aborts the whole transaction, so this is where a write
    /// without a savepoint could take the others' writes with it unseen.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn writes_without_a_savepoint_on_postgres() {
        let (_cluster, store) = postgres_store().await;
        writes_without_a_savepoint_are_undone_with_their_group(store).await;
    }
}
