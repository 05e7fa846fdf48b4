//! Writes of a SQLite file run on the request's thread, in one rusqlite connection, committed
//! in groups (docs/database.md, writes).
//!
//! The pooled writes (`writer.rs`) pass the write turn from task to task: a write is scheduled
//! to take the turn, again for each of its statements (each handed to a sqlx connection's
//! thread and back), and again to give the turn on, and each member of a group adds a
//! savepoint and its release. Under 32 concurrent `POST /api/credentials` a write's own
//! statements took 50 µs, but it held the turn about three times as long (BENCHMARKS.md,
//! closing note). Here a write's statements run where the write is, inside a lock held only
//! while they run, never across an `.await`:
//!
//! - A group is a transaction of the write connection, begun with `BEGIN IMMEDIATE` by a task
//!   of its own (which first takes this process's write turn from the pooled writes,
//!   `Writer::direct_turn`), and open until its `COMMIT`.
//! - A writer that finds a group open joins it at once: under the lock it runs its work, polled
//!   once (a direct write's statements never wait, so its future is ready at the first poll;
//!   one that is not fails).
//! - No savepoint per write: the work of the shared record machinery refuses (a missing row, a
//!   row in use) before it changes anything, so a refused write leaves nothing to undo. A write
//!   that fails after it changed something (an I/O error) cannot be undone alone: its group
//!   rolls back and every member of it fails, as when a `COMMIT` fails. A savepoint per write
//!   cost a third of the throughput: two statements more, and the search index (FTS5) writes
//!   its pending rows out at every savepoint, once per write instead of once per group.
//! - A writer that finds none open, or one committing, waits for the next group. The writers
//!   waiting when a group opens are counted; the last of them to join (or to give up, its
//!   request gone) starts the commit, as does a write that fills the group to `MAX_GROUP`. So a
//!   group commits as soon as the writers that queued for it have run, and a lone writer at
//!   once.
//! - The commit runs in a task of its own on the blocking pool (it waits for the disk), and
//!   each member learns the outcome: a write is answered only once its group's `COMMIT`
//!   returned. Writers that came meanwhile are already waiting: the commit's task opens the
//!   next group for them.
//!
//! Only the tables of the shared record machinery write here (`Store::write`); the rest of the
//! writes stay pooled, and the two kinds take turns through the write turn.

use super::Result;
use super::direct::DirectConnections;
use super::writer::{MAX_GROUP, WriteTx, Writer};
use rusqlite::Connection;
use std::pin::pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use tokio::sync::{Notify, OwnedMutexGuard, oneshot};

/// What a member learns when its group ends: `None` when committed, else why not.
type Outcome = Option<String>;

/// What a waiting writer is told.
#[derive(Debug, Clone)]
enum Release {
    /// The group numbered so is open, and this writer is counted among those it waits for.
    Open(u64),
    /// Beginning a group failed.
    Failed(String),
}

/// The direct writes of one SQLite file.
#[derive(Debug)]
pub(super) struct DirectWrites {
    connections: Arc<DirectConnections>,
    /// This process's write turn, shared with the pooled writes, and the commit counters.
    writer: Arc<Writer>,
    /// Woken after a commit that queued a webhook delivery.
    wake: Arc<Notify>,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// The write connection, between the statements of writes; `None` before the first write,
    /// after a failure that left it unusable, or while the commit's task holds it.
    conn: Option<Connection>,
    phase: Phase,
    /// Numbers the groups, so a writer counted for one group is never counted for another.
    group: u64,
    /// Writers waiting for the next group to open.
    waiting: Vec<oneshot::Sender<Release>>,
    /// Writers counted when the open group opened that have neither joined it nor given up.
    expected: usize,
    /// The open group's members, waiting for its commit.
    members: Vec<oneshot::Sender<Outcome>>,
    /// Whether a member queued a webhook delivery (the commit then wakes the delivery workers).
    queued: bool,
    /// Why the open group cannot commit (a member failed after it changed something): it rolls
    /// back, and every member fails.
    broken: Option<String>,
    /// This process's write turn, held by the open group until its commit ended.
    turn: Option<OwnedMutexGuard<()>>,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// No group, and none beginning.
    #[default]
    Idle,
    /// A task is beginning a group.
    Beginning,
    /// A group takes writes.
    Open,
    /// The group's `COMMIT` runs; the next group begins after it.
    Committing,
}

impl DirectWrites {
    pub(super) fn new(
        connections: Arc<DirectConnections>,
        writer: Arc<Writer>,
        wake: Arc<Notify>,
    ) -> DirectWrites {
        DirectWrites {
            connections,
            writer,
            wake,
            state: Mutex::new(State::default()),
        }
    }

    /// Whether writes may still run here (else they go to the pool): until `Store::close`.
    pub(super) fn is_open(&self) -> bool {
        self.connections.is_open()
    }

    /// Runs `work` in a group and returns its value once the group committed. `work`'s
    /// statements must all go through [`WriteTx::exec`] (a direct write has no sqlx
    /// connection) and never wait for anything else.
    pub(super) async fn write<T>(
        self: &Arc<Self>,
        work: impl AsyncFnOnce(&mut WriteTx) -> Result<T>,
    ) -> Result<T> {
        let mut place = Place {
            writes: self,
            waiting: None,
            counted: None,
        };
        // Taken by the one pass of the loop that finds a group open.
        let mut work = Some(work);
        loop {
            if let Some(receiver) = place.waiting.as_mut() {
                let release = receiver.await;
                place.waiting = None;
                match release {
                    Ok(Release::Open(group)) => place.counted = Some(group),
                    Ok(Release::Failed(why)) => return Err(failed(why)),
                    Err(_) => return Err(failed("the group ended before it opened")),
                }
            }
            let joined = {
                let mut state = self.state();
                if state.phase == Phase::Open
                    && let Some(work) = work.take()
                {
                    let joined = self.join(&mut state, work);
                    place.leave(&mut state);
                    if state.phase == Phase::Open
                        && (state.members.len() >= MAX_GROUP || state.broken.is_some())
                    {
                        self.start_commit(&mut state);
                    }
                    Some(joined)
                } else {
                    // No group open: wait for the next one (a writer counted for a group that
                    // filled up and began its commit without it waits too; that group no longer
                    // counts it).
                    place.counted = None;
                    let (sender, receiver) = oneshot::channel();
                    state.waiting.push(sender);
                    place.waiting = Some(receiver);
                    if state.phase == Phase::Idle {
                        state.phase = Phase::Beginning;
                        // In a task of its own: a group begun opens, and its waiting writers
                        // are told, even if this request is dropped meanwhile.
                        tokio::spawn(self.clone().begin());
                    }
                    None
                }
            };
            if let Some(joined) = joined {
                let (value, outcome) = joined?;
                return match outcome.await {
                    Ok(None) => Ok(value),
                    Ok(Some(why)) => Err(failed(why)),
                    Err(_) => Err(failed("the group ended without an outcome")),
                };
            }
        }
    }

    /// Runs `work` in the open group: its value and the receiver of the group's outcome, or its
    /// error (which breaks the group if `work` had changed something).
    fn join<T>(
        &self,
        state: &mut State,
        work: impl AsyncFnOnce(&mut WriteTx) -> Result<T>,
    ) -> Result<(T, oneshot::Receiver<Outcome>)> {
        let Some(conn) = state.conn.take() else {
            return Err(failed("the write connection was lost"));
        };
        let changes = conn.total_changes();
        let mut tx = WriteTx::direct(conn);
        let done = {
            let future = pin!(work(&mut tx));
            match future.poll(&mut Context::from_waker(Waker::noop())) {
                Poll::Ready(done) => done,
                // A bug of the store: the work awaited something that a direct write's
                // statements never wait for.
                Poll::Pending => Err(failed("a direct write waited for something else")),
            }
        };
        let (conn, queued) = tx.into_direct();
        // The connection is only lent to the work, which cannot keep it; checked all the same.
        let Some(conn) = conn else {
            return Err(failed("the write connection was lost"));
        };
        if let Err(e) = &done
            && conn.total_changes() != changes
        {
            // Failed after it changed something, which only a rollback of the group undoes.
            state.broken = Some(e.to_string());
        }
        state.conn = Some(conn);
        let value = done?;
        state.queued |= queued;
        let (sender, receiver) = oneshot::channel();
        state.members.push(sender);
        Ok((value, receiver))
    }

    /// Begins a group for the writers waiting, in its own task: takes the write turn, then
    /// `BEGIN IMMEDIATE` on the blocking pool (another process holding the lock makes it wait,
    /// up to the busy timeout).
    async fn begin(self: Arc<Self>) {
        let turn = self.writer.direct_turn(&self.wake).await;
        let conn = self.state().conn.take();
        let connections = self.connections.clone();
        let begun = tokio::task::spawn_blocking(move || {
            let conn = match conn {
                Some(conn) => conn,
                None => match connections.open_writer() {
                    Ok(conn) => conn,
                    Err(e) => return (None, Err(e)),
                },
            };
            let begun = conn.execute_batch("BEGIN IMMEDIATE");
            (Some(conn), begun.map_err(Into::into))
        })
        .await;
        let (conn, begun) = begun.unwrap_or_else(|e| (None, Err(failed(e))));
        let mut state = self.state();
        state.conn = conn;
        match begun {
            Ok(()) => {
                state.phase = Phase::Open;
                state.turn = Some(turn);
                state.group += 1;
                let group = state.group;
                let waiting = std::mem::take(&mut state.waiting);
                state.expected = waiting
                    .into_iter()
                    .filter_map(|w| w.send(Release::Open(group)).ok())
                    .count();
                if state.expected == 0 {
                    // Everyone gave up meanwhile.
                    self.start_commit(&mut state);
                }
            }
            Err(e) => {
                state.phase = Phase::Idle;
                let why = e.to_string();
                for waiting in std::mem::take(&mut state.waiting) {
                    let _ = waiting.send(Release::Failed(why.clone()));
                }
            }
        }
    }

    /// Ends the open group: its `COMMIT` (or its rollback, when broken) in a task of its own.
    fn start_commit(self: &Arc<Self>, state: &mut State) {
        state.phase = Phase::Committing;
        state.expected = 0;
        let group = Group {
            conn: state.conn.take(),
            members: std::mem::take(&mut state.members),
            queued: std::mem::take(&mut state.queued),
            broken: state.broken.take(),
            turn: state.turn.take(),
        };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(self.clone().commit(group));
            }
            // The runtime is gone (the process ends): the transaction rolls back as its
            // connection closes, and the members, if any still listen, learn it failed.
            Err(_) => {
                for member in group.members {
                    let _ = member.send(Some("the server stopped before the commit".into()));
                }
            }
        }
    }

    async fn commit(self: Arc<Self>, group: Group) {
        let Group {
            conn,
            members,
            queued,
            broken,
            turn,
        } = group;
        let writes = members.len();
        let committing = self.writer.committing();
        let ended = tokio::task::spawn_blocking(move || {
            let Some(conn) = conn else {
                return (None, Err("the write connection was lost".to_owned()));
            };
            let committed = match broken {
                Some(why) => Err(why),
                None => conn.execute_batch("COMMIT").map_err(|e| e.to_string()),
            };
            // A connection still in a transaction after a failed `COMMIT` rolls it back;
            // one that cannot is closed rather than used again.
            let usable = conn.is_autocommit() || conn.execute_batch("ROLLBACK").is_ok();
            (usable.then_some(conn), committed)
        })
        .await;
        drop(committing);
        let (conn, committed) =
            ended.unwrap_or_else(|e| (None, Err(format!("the commit's task ended: {e}"))));
        if committed.is_ok() && writes > 0 {
            self.writer.count_commit(writes);
        }
        let outcome = committed
            .err()
            .map(|why| format!("the transaction failed: {why}"));
        for member in members {
            let _ = member.send(outcome.clone());
        }
        if outcome.is_none() && queued {
            self.wake.notify_one();
        }
        // The turn goes back before the next group takes it again, so pooled writes waiting
        // for it go first.
        drop(turn);
        let next = {
            let mut state = self.state();
            if self.connections.is_open() {
                state.conn = conn;
            }
            state.phase = if state.waiting.is_empty() {
                Phase::Idle
            } else {
                Phase::Beginning
            };
            state.phase == Phase::Beginning
        };
        if next {
            self.begin().await;
        }
    }

    /// Closes the write connection when no group holds it (`Store::close`, once the server
    /// stopped taking requests); a group still committing closes it when done.
    pub(super) fn close(&self) {
        self.state().conn.take();
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// An open group handed to its commit.
struct Group {
    conn: Option<Connection>,
    members: Vec<oneshot::Sender<Outcome>>,
    queued: bool,
    broken: Option<String>,
    turn: Option<OwnedMutexGuard<()>>,
}

/// Where a writer stands: waiting for a group to open, and counted by the open group until it
/// joins it. A writer dropped meanwhile (its request gone) leaves its place in `Drop`, so a
/// group never waits for it.
struct Place<'a> {
    writes: &'a Arc<DirectWrites>,
    waiting: Option<oneshot::Receiver<Release>>,
    /// The group that counts this writer.
    counted: Option<u64>,
}

impl Place<'_> {
    /// No longer awaited by its group: the last writer the group waited for starts its commit.
    fn leave(&mut self, state: &mut State) {
        let Some(group) = self.counted.take() else {
            return;
        };
        if state.phase == Phase::Open && state.group == group {
            state.expected -= 1;
            if state.expected == 0 {
                self.writes.start_commit(state);
            }
        }
    }
}

impl Drop for Place<'_> {
    fn drop(&mut self) {
        if self.waiting.is_none() && self.counted.is_none() {
            return;
        }
        let writes = self.writes;
        let mut state = writes.state();
        // Under the lock, as the group's opening is: either it was told already (then it
        // counts this writer, which leaves), or it will find this receiver gone.
        if let Some(mut receiver) = self.waiting.take()
            && let Ok(Release::Open(group)) = receiver.try_recv()
        {
            self.counted = Some(group);
        }
        self.leave(&mut state);
    }
}

/// A direct write that failed outside its own statements.
fn failed(why: impl std::fmt::Display) -> super::Error {
    sqlx::Error::Protocol(format!("the direct write failed: {why}")).into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Direct writes to a new file holding a `scratch (n)` table.
    fn writes(dir: &tempfile::TempDir) -> Arc<DirectWrites> {
        let path = dir.path().join("t.db");
        Connection::open(&path)
            .unwrap()
            .execute_batch("PRAGMA journal_mode = WAL; CREATE TABLE scratch (n INTEGER);")
            .unwrap();
        Arc::new(DirectWrites::new(
            Arc::new(DirectConnections::new(path)),
            Arc::default(),
            Arc::new(Notify::new()),
        ))
    }

    fn rows(dir: &tempfile::TempDir) -> Vec<i64> {
        let conn = Connection::open(dir.path().join("t.db")).unwrap();
        let mut statement = conn.prepare("SELECT n FROM scratch ORDER BY n").unwrap();
        statement
            .query_map([], |row| row.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap()
    }

    async fn insert(tx: &mut WriteTx, n: i64) -> Result<u64> {
        tx.exec()
            .execute("INSERT INTO scratch (n) VALUES ($1)", &[n.into()])
            .await
    }

    /// What a write of `n` does: 3k+1 is refused before it writes, 3k+2 fails after it wrote
    /// (a statement on a table that does not exist), the others insert `n`.
    async fn work(tx: &mut WriteTx, n: i64) -> Result<i64> {
        if n % 3 == 1 {
            return Err(super::super::Error::Missing {
                kind: tunnel_core::ids::IdKind::Credential,
                id: n.to_string(),
                field: "n".into(),
            });
        }
        insert(tx, n).await?;
        if n % 3 == 2 {
            tx.exec()
                .execute("INSERT INTO nowhere VALUES (1)", &[])
                .await?;
        }
        Ok(n)
    }

    /// Writes of `work(n)`, one for each `n`, started while the write turn is held (returned
    /// too), once they all wait for the group it keeps from opening.
    async fn spawn_queued(
        writes: &Arc<DirectWrites>,
        ns: impl IntoIterator<Item = i64>,
    ) -> (
        OwnedMutexGuard<()>,
        Vec<tokio::task::JoinHandle<Result<i64>>>,
    ) {
        let turn = writes.writer.direct_turn(&writes.wake).await;
        let tasks: Vec<_> = ns
            .into_iter()
            .map(|n| {
                let writes = writes.clone();
                tokio::spawn(async move { writes.write(async |tx| work(tx, n).await).await })
            })
            .collect();
        wait_for(|| writes.state().waiting.len() == tasks.len()).await;
        (turn, tasks)
    }

    /// Writes of `work(n)` queued for one group ([`spawn_queued`]), then the turn given back:
    /// their results, in order.
    async fn queued(
        writes: &Arc<DirectWrites>,
        ns: impl IntoIterator<Item = i64>,
    ) -> Vec<Result<i64>> {
        let (turn, tasks) = spawn_queued(writes, ns).await;
        drop(turn);
        let mut results = Vec::new();
        for task in tasks {
            results.push(task.await.unwrap());
        }
        results
    }

    /// A writer that waited with `receiver` gives up (its request dropped).
    fn give_up(writes: &Arc<DirectWrites>, receiver: oneshot::Receiver<Release>) {
        drop(Place {
            writes,
            waiting: Some(receiver),
            counted: None,
        });
    }

    async fn wait_for(mut done: impl FnMut() -> bool) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while !done() {
            assert!(tokio::time::Instant::now() < deadline, "timed out");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn queued_writes_commit_together_and_a_refused_one_alone_is_left_out() {
        let dir = tempfile::tempdir().unwrap();
        let writes = writes(&dir);
        // 0, 3, 6, … insert; 1, 4, 7, … are refused before they write.
        let ns: Vec<i64> = (0..30).filter(|n| n % 3 != 2).collect();
        let results = queued(&writes, ns.clone()).await;
        for (n, result) in ns.iter().zip(&results) {
            match n % 3 {
                0 => assert_eq!(result.as_ref().unwrap(), n),
                _ => assert!(matches!(result, Err(super::super::Error::Missing { .. }))),
            }
        }
        let kept: Vec<i64> = (0..30).filter(|n| n % 3 == 0).collect();
        assert_eq!(rows(&dir), kept);
        // Twenty writes queued behind the turn: one group, one commit.
        assert_eq!(writes.writer.committed(), (1, 10));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_write_failing_after_it_wrote_fails_its_group_and_the_next_group_goes_on() {
        let dir = tempfile::tempdir().unwrap();
        let writes = writes(&dir);
        // A group held open by a writer it counts that has not joined yet (the test's).
        let (turn, mut first) = spawn_queued(&writes, [0]).await;
        let first = first.remove(0);
        let (sender, receiver) = oneshot::channel();
        writes.state().waiting.push(sender);
        drop(turn);
        wait_for(|| writes.state().members.len() == 1).await;
        // 5 writes, then fails: its group, 0 with it, rolls back at once.
        let failed = writes.write(async |tx| work(tx, 5).await).await;
        let error = failed.unwrap_err().to_string();
        assert!(error.contains("nowhere"), "{error}");
        let first = tokio::time::timeout(Duration::from_secs(10), first).await;
        let error = first
            .expect("the group ended")
            .unwrap()
            .unwrap_err()
            .to_string();
        assert!(error.contains("the transaction failed"), "{error}");
        assert!(error.contains("nowhere"), "{error}");
        give_up(&writes, receiver);
        assert_eq!(rows(&dir), Vec::<i64>::new());
        assert_eq!(writes.writer.committed(), (0, 0));
        // The connection is fine for the next group.
        let results = queued(&writes, [9, 12]).await;
        assert!(results.iter().all(Result::is_ok), "{results:?}");
        assert_eq!(rows(&dir), vec![9, 12]);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_write_that_waits_for_something_else_fails_and_keeps_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let writes = writes(&dir);
        let waited = writes
            .write(async |tx| {
                tokio::task::yield_now().await;
                insert(tx, 1).await
            })
            .await;
        let error = waited.unwrap_err().to_string();
        assert!(error.contains("waited for something else"), "{error}");
        // Before it waited it had written nothing; a write after it goes through.
        writes.write(async |tx| insert(tx, 2).await).await.unwrap();
        assert_eq!(rows(&dir), vec![2]);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn dropped_writers_never_strand_a_group() {
        let dir = tempfile::tempdir().unwrap();
        let writes = writes(&dir);
        let (turn, tasks) = spawn_queued(&writes, (0..10).map(|k| 3 * k)).await;
        // Half of them gone while they wait for the group to open.
        for task in &tasks[..5] {
            task.abort();
        }
        drop(turn);
        for task in tasks.into_iter().skip(5) {
            tokio::time::timeout(Duration::from_secs(10), task)
                .await
                .expect("no group stranded")
                .unwrap()
                .unwrap();
        }
        assert_eq!(rows(&dir), vec![15, 18, 21, 24, 27]);

        // A writer counted by the group as it opens, gone before it joins (its request dropped
        // between the two): its place, dropped, starts the commit the group waits for.
        let (sender, receiver) = oneshot::channel();
        {
            let mut state = writes.state();
            state.waiting.push(sender);
            state.phase = Phase::Beginning;
        }
        tokio::spawn(writes.clone().begin());
        wait_for(|| writes.state().phase == Phase::Open).await;
        assert_eq!(writes.state().expected, 1);
        give_up(&writes, receiver);
        let later = writes.write(async |tx| work(tx, 30).await);
        tokio::time::timeout(Duration::from_secs(10), later)
            .await
            .expect("no group stranded")
            .unwrap();
        assert_eq!(rows(&dir), vec![15, 18, 21, 24, 27, 30]);
    }
}
