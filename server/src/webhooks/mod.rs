//! Webhook delivery (docs/api/event_destinations.md, deliveries): the worker that sends the
//! deliveries `store::events` queues, at least once, signed (`sign`), to public addresses only
//! (`ssrf`), over `client`.
//!
//! A service: it knows the store and the key vault, not the HTTP layer, which hands it the wire
//! form of events ([`Worker::new`], built by `api::event_destinations::spawn_deliveries`).
//!
//! One loop task ([`Worker::spawn`]) sleeps until a commit queued a delivery (`Store::deliveries_queued`)
//! or the earliest due retry (at most [`MAX_IDLE`]), never polling; it claims the due deliveries
//! with a lease and sends each in its own task, at most `--webhook-concurrency` at once. Within
//! its share, one destination gets a quarter of them and one account half; beyond it, one
//! receiver's backlog gets the senders left but a reserve of a quarter ([`Shares`]): a receiver
//! that answers slowly (or never, until the timeout) and its backlog cannot hold every sender
//! while other destinations' deliveries wait, the other accounts' above all. Each
//! attempt is recorded with the delivery's new state in one transaction: a 2xx succeeds it;
//! anything else schedules a retry with exponential backoff and jitter ([`retry_delay`]), until
//! [`MAX_ATTEMPTS`]. A server killed mid-send leaves a lease that expires (or is released as
//! soon as its node is removed from the cluster, docs/cluster.md), so the delivery is sent
//! again: receivers deduplicate on `webhook-id`, which is the event id, the same for every
//! attempt. Every node of a cluster runs this worker; a claim is exclusive, so no two nodes
//! send the same attempt.

pub mod client;
pub mod sign;
pub mod ssrf;

use crate::keys::KeyVault;
use crate::store::{
    AttemptOutcome, BusyTargets, ClaimedDelivery, EventRow, SealedSecrets, Store, unix_ms,
};
use rand::Rng as _;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tunnel_core::resources::event_destination::DeliveryAttempt;

/// Attempts of a delivery before it fails: with the default 5 s base, retries 5 s, 10 s, …
/// doubling up to 4 h apart, about 22 h in all.
pub const MAX_ATTEMPTS: u32 = 17;
/// The longest wait between two retries, in retry bases (4 h for the default 5 s).
const MAX_DELAY_BASES: u32 = 2880;
/// The longest the loop sleeps without looking (a guard; commits and retries wake it).
const MAX_IDLE: Duration = Duration::from_secs(30);
/// How long a claimed delivery is hidden from other claims, beyond the request's timeout.
const LEASE_MARGIN: Duration = Duration::from_secs(50);
/// How long a stopping worker waits, beyond the request timeout, for its sends in flight to
/// record their attempts.
const DRAIN_MARGIN: Duration = Duration::from_secs(5);
/// How long after a rotation the previous secret still signs.
pub const PREVIOUS_SECRET_VALIDITY: Duration = Duration::from_secs(24 * 3600);

/// The settings of webhook delivery (`--webhook-*`, `--allow-private-webhooks`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// Whether webhooks may reach private, loopback and link-local addresses (`ssrf`).
    pub allow_private: bool,
    /// How long one request may take, from connecting to the end of the answer.
    pub timeout: Duration,
    /// How many requests are in flight at most.
    pub concurrency: usize,
    /// The wait before the first retry; each later one doubles it.
    pub retry_base: Duration,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            allow_private: false,
            timeout: Duration::from_secs(10),
            concurrency: 16,
            retry_base: Duration::from_secs(5),
        }
    }
}

/// The JSON of an event as the API shows it (its wire form, with its `uri`, fields in the
/// order `GET /events/{id}` writes them).
pub type EventJson = Arc<dyn Fn(EventRow) -> Vec<u8> + Send + Sync>;

/// What the delivery worker works with; cheap to clone.
#[derive(Clone)]
pub struct Worker {
    store: Store,
    /// This node's id, written on the leases it takes.
    node_id: String,
    keys: KeyVault,
    settings: Settings,
    sender: client::Sender,
    event_json: EventJson,
}

impl std::fmt::Debug for Worker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Worker")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl Worker {
    pub fn new(
        store: Store,
        node_id: String,
        keys: KeyVault,
        settings: Settings,
        sender: client::Sender,
        event_json: EventJson,
    ) -> Worker {
        Worker {
            store,
            node_id,
            keys,
            settings,
            sender,
            event_json,
        }
    }

    /// Starts the delivery loop. One per node; what a previous run of a node was sending was
    /// released when that run left the cluster (`store::sessions`: its last step, or its
    /// lease's end after a crash).
    ///
    /// The loop claims nothing more once `stop` turns true (a clean shutdown), lets the sends
    /// in flight finish and record their attempts (each bounded by the webhook timeout), and
    /// ends: the node then frees what it still holds as it leaves. Had it gone on claiming, it
    /// would send again what its own senders still had in flight, under leases no one frees
    /// until they expire. A `stop` whose sender is gone never comes (tests).
    pub fn spawn(self, stop: tokio::sync::watch::Receiver<bool>) -> tokio::task::JoinHandle<()> {
        tokio::spawn(self.run(stop))
    }

    async fn run(self, mut stop: tokio::sync::watch::Receiver<bool>) {
        let concurrency = self.settings.concurrency.max(1);
        let permits = Arc::new(Semaphore::new(concurrency));
        let shares = Shares::new(concurrency);
        let lease = self.settings.timeout + LEASE_MARGIN;
        let queued = self.store.deliveries_queued();
        let stopping = async move {
            if stop.wait_for(|stop| *stop).await.is_err() {
                std::future::pending::<()>().await;
            }
        };
        tokio::pin!(stopping);
        loop {
            // A sender free before anything is claimed: a claim's lease runs from the claim,
            // and a delivery waiting for a sender could outlive it and be claimed again
            // elsewhere (or here) while it is still being sent.
            // Stopping first: a free sender must not win over a stop asked at the same time.
            let first = tokio::select! {
                biased;
                () = &mut stopping => break,
                permit = permits.clone().acquire_owned() => permit,
            };
            let Ok(first) = first else {
                return;
            };
            let mut first = Some(first);
            // Every permit left is free at once: only this loop takes them.
            let free = 1 + permits.available_permits();
            let now = unix_ms(time::OffsetDateTime::now_utc());
            let lease_until = now + ms(lease);
            // First what is within its share: the destinations and accounts at theirs are
            // left aside.
            let busy = shares.busy();
            let fair = self.claim(now, lease_until, free, &busy).await;
            let full = fair.len() >= free;
            let mut beyond = Vec::new();
            for delivery in fair {
                match shares.take(&delivery) {
                    Some(share) => {
                        let Some(permit) = self.permit(&mut first, &permits).await else {
                            return;
                        };
                        self.spawn_send(delivery, Some(share), permit, &shares);
                    }
                    None => beyond.push(delivery),
                }
            }
            // Then the senders beyond the reserve go to what waits beyond its share (one
            // receiver's backlog): with nothing else due they work rather than idle, while the
            // reserve stays for deliveries within their share, the other accounts' above all.
            // What the first claim took beyond a share goes to them first; what they cannot
            // take goes back.
            let mut spare = (usize::from(first.is_some()) + permits.available_permits())
                .saturating_sub(shares.reserve);
            // Something may wait beyond its share only if the claim left targets aside or met
            // a share itself: else a second claim could only come back empty.
            let maybe_beyond = !busy.is_empty() || !beyond.is_empty();
            let mut beyond = beyond.into_iter();
            let mut extra: Vec<ClaimedDelivery> = beyond.by_ref().take(spare).collect();
            spare -= extra.len();
            let surplus: Vec<String> = beyond.map(|delivery| delivery.id).collect();
            if let Err(e) = self.store.release_deliveries(&self.node_id, &surplus).await {
                // Their leases end on their own, later.
                tracing::warn!("cannot give back webhook deliveries: {e}");
            }
            let mut more = full;
            if spare > 0 && surplus.is_empty() && maybe_beyond {
                let claimed = self
                    .claim(now, lease_until, spare, &BusyTargets::default())
                    .await;
                more |= claimed.len() >= spare;
                extra.extend(claimed);
            }
            // Not counted in the shares: a spare sender's send does not make its account (its
            // other destinations) wait, and the reserve bounds how many there are.
            for delivery in extra {
                let Some(permit) = self.permit(&mut first, &permits).await else {
                    return;
                };
                self.spawn_send(delivery, None, permit, &shares);
            }
            drop(first);
            if more && surplus.is_empty() {
                // More may be due: claim again once a sender is free (the acquire above waits).
                continue;
            }
            // With senders to spare, what waits beyond its share is due too.
            let spare_left = permits.available_permits() > shares.reserve;
            let busy = if spare_left {
                BusyTargets::default()
            } else {
                shares.busy()
            };
            let wait = match self.store.next_delivery_due(&busy).await {
                Ok(Some(due)) => {
                    let now = unix_ms(time::OffsetDateTime::now_utc());
                    Duration::from_millis(u64::try_from(due - now).unwrap_or(0)).min(MAX_IDLE)
                }
                Ok(None) => MAX_IDLE,
                Err(e) => {
                    tracing::warn!("cannot read when the next webhook delivery is due: {e}");
                    MAX_IDLE
                }
            };
            // Due now yet not claimed means leased by a sender still running: a short pause
            // rather than a spin (its end notifies anyway when it schedules a retry).
            let wait = wait.max(Duration::from_millis(20));
            tokio::select! {
                () = queued.notified() => {}
                // A send's end that frees a share or a spare sender: what was left aside is
                // claimable again.
                () = shares.ended.notified() => {}
                () = tokio::time::sleep(wait) => {}
                () = &mut stopping => break,
            }
        }
        // Every permit back: every send in flight has recorded its attempt. Bounded anyway, by
        // the longest a send may take and a margin to record it.
        let all = u32::try_from(concurrency).unwrap_or(u32::MAX);
        let drained = tokio::time::timeout(
            self.settings.timeout + DRAIN_MARGIN,
            permits.acquire_many(all),
        )
        .await;
        if drained.is_err() {
            tracing::warn!("webhook sends still running at shutdown; they will be sent again");
        }
    }

    /// Claims up to `limit` due deliveries for this node, leaving `busy` aside; none when the
    /// database does not answer (logged: the loop tries again).
    async fn claim(
        &self,
        now: i64,
        lease_until: i64,
        limit: usize,
        busy: &BusyTargets,
    ) -> Vec<ClaimedDelivery> {
        let limit = u32::try_from(limit).unwrap_or(u32::MAX);
        self.store
            .claim_deliveries(&self.node_id, now, lease_until, limit, busy)
            .await
            .unwrap_or_else(|e| {
                tracing::warn!("cannot claim webhook deliveries: {e}");
                Vec::new()
            })
    }

    /// A sender's permit: the one the loop waited for, else one of those free (only the loop
    /// takes them, so none is waited for). `None` once the semaphore is closed.
    async fn permit(
        &self,
        first: &mut Option<OwnedSemaphorePermit>,
        permits: &Arc<Semaphore>,
    ) -> Option<OwnedSemaphorePermit> {
        match first.take() {
            Some(permit) => Some(permit),
            None => permits.clone().acquire_owned().await.ok(),
        }
    }

    /// Sends `delivery` in a task of its own, holding its share (if it has one) and its sender
    /// until it ends.
    fn spawn_send(
        &self,
        delivery: ClaimedDelivery,
        share: Option<Share>,
        permit: OwnedSemaphorePermit,
        shares: &Shares,
    ) {
        let worker = self.clone();
        let ended = shares.ended.clone();
        tokio::spawn(async move {
            worker.deliver(delivery).await;
            // Only an end that frees what a claim left aside wakes the loop: a spare sender's,
            // or a share's that was full. Any other end frees nothing the loop waits for, and
            // waking it would cost a claim after every send.
            let frees = share.as_ref().is_none_or(Share::is_full);
            drop(share);
            drop(permit);
            if frees {
                ended.notify_one();
            }
        });
    }

    /// One attempt of `delivery`, recorded.
    async fn deliver(&self, delivery: ClaimedDelivery) {
        let attempt_no = delivery.attempt_count + 1;
        let attempt = match self.prepare(&delivery).await {
            Ok((url, body, secrets)) => {
                let secrets: Vec<&str> = secrets.iter().map(String::as_str).collect();
                self.sender
                    .post(&url, &delivery.event_id, &secrets, body)
                    .await
            }
            Err(Unsendable::Destination(why)) => DeliveryAttempt {
                attempted_at: client::rfc3339_ms(time::OffsetDateTime::now_utc()),
                status_code: None,
                latency_ms: 0,
                error: Some(why),
                response_body: None,
            },
            Err(Unsendable::Gone) => {
                tracing::debug!(delivery = %delivery.id, "webhook delivery of a deleted destination or event");
                return;
            }
            // Not an attempt: nothing was sent, and the receiver did nothing wrong. Its lease
            // left as it is, the delivery is claimed again when it ends.
            Err(Unsendable::Server(why)) => {
                tracing::warn!(
                    delivery = %delivery.id,
                    destination = %delivery.destination_id,
                    "cannot prepare a webhook delivery; it is tried again once its lease ends: {why}"
                );
                return;
            }
        };
        let outcome = if attempt.error.is_none() {
            AttemptOutcome::Succeeded
        } else if attempt_no >= MAX_ATTEMPTS {
            AttemptOutcome::Failed
        } else {
            let delay = retry_delay(self.settings.retry_base, attempt_no);
            AttemptOutcome::RetryAt(unix_ms(time::OffsetDateTime::now_utc()) + ms(delay))
        };
        tracing::debug!(delivery = %delivery.id, attempt = attempt_no, ?outcome, error = ?attempt.error, "webhook attempt");
        match self
            .store
            .record_attempt(&delivery.id, attempt_no, &attempt, outcome)
            .await
        {
            Ok(()) => {}
            // The destination (and its deliveries) deleted while the attempt was in flight:
            // nothing left to record or retry, and nothing wrong with the database.
            Err(crate::store::Error::Database(e)) if e.is_foreign_key_violation() => {
                tracing::debug!(delivery = %delivery.id, "webhook attempt of a deleted destination");
                return;
            }
            Err(e) => {
                tracing::warn!(delivery = %delivery.id, "cannot record a webhook attempt: {e}");
                return;
            }
        }
        // An operator learns of a receiver that keeps failing without reading the API. The
        // error says why in words, never with the URL (`client::describe`).
        match (&outcome, &attempt.error) {
            (AttemptOutcome::Failed, Some(error)) => tracing::warn!(
                delivery = %delivery.id,
                destination = %delivery.destination_id,
                attempts = attempt_no,
                %error,
                "webhook delivery failed for good"
            ),
            (AttemptOutcome::RetryAt(_), Some(error)) => tracing::info!(
                delivery = %delivery.id,
                destination = %delivery.destination_id,
                attempt = attempt_no,
                %error,
                "webhook attempt failed; it will be retried"
            ),
            _ => {}
        }
        if matches!(outcome, AttemptOutcome::RetryAt(_)) {
            // The loop may be asleep until a later time than this retry's.
            self.store.deliveries_queued().notify_one();
        }
    }

    /// The URL, the body (the event as `GET /api/events/{id}` answers it) and the signing
    /// secrets of a delivery; `Err` in words when it cannot be sent.
    async fn prepare(
        &self,
        delivery: &ClaimedDelivery,
    ) -> Result<(String, Vec<u8>, Vec<String>), Unsendable> {
        let (account, destination) = (&delivery.account_id, &delivery.destination_id);
        let target = self
            .store
            .destination_target(account, destination)
            .await
            .map_err(|e| Unsendable::store("cannot read the destination", e))?;
        let url = target.webhook.map(|hook| hook.url).ok_or_else(|| {
            Unsendable::Destination("the destination has no webhook target".to_owned())
        })?;
        let event = self
            .store
            .get_event(account, &delivery.event_id)
            .await
            .map_err(|e| Unsendable::store("cannot read the event", e))?;
        let body = (self.event_json)(event);
        let secrets = signing_secrets(&self.store, &self.keys, account, destination).await?;
        Ok((url, body, secrets))
    }
}

/// Why a delivery cannot be sent now.
#[derive(Debug, thiserror::Error)]
pub enum Unsendable {
    /// The destination cannot be sent to as it is (no webhook target, a secret this server key
    /// does not open): a failed attempt, recorded, in words its admin reads.
    #[error("{0}")]
    Destination(String),
    /// The destination or the event is gone (deleted while the delivery waited).
    #[error("the destination or the event is gone")]
    Gone,
    /// This server could not do its part (its database out of reach): not the receiver's
    /// failure, so no attempt; the delivery is sent again once its lease ends. Logged, never
    /// shown in the API (it may hold the database's words).
    #[error("{0}")]
    Server(String),
}

impl Unsendable {
    fn store(what: &str, e: crate::store::Error) -> Unsendable {
        match e {
            crate::store::Error::NotFound { .. } => Unsendable::Gone,
            // The same at every try: an attempt, so that the delivery ends (`failed`) rather
            // than being tried for good. The log has the details.
            crate::store::Error::Database(e) if e.is_unreadable_row() => {
                tracing::warn!("{what}: {e}");
                Unsendable::Destination(format!("{what}: this server cannot read it as stored"))
            }
            e => Unsendable::Server(format!("{what}: {e}")),
        }
    }
}

/// The secrets requests to the destination are signed with: its current one, and the previous
/// one while it still signs. A destination created before destinations had secrets gets one now
/// (an admin sees it by rotating).
pub async fn signing_secrets(
    store: &Store,
    keys: &KeyVault,
    account_id: &str,
    destination_id: &str,
) -> Result<Vec<String>, Unsendable> {
    let mut sealed = store
        .destination_secrets(account_id, destination_id)
        .await
        .map_err(|e| Unsendable::store("cannot read the destination", e))?;
    if sealed.current.is_none() {
        let fresh = keys
            .seal(sign::new_secret().as_bytes(), destination_id)
            .map_err(|e| Unsendable::Server(format!("cannot seal a signing secret: {e}")))?;
        sealed = store
            .ensure_destination_secret(account_id, destination_id, &fresh)
            .await
            .map_err(|e| Unsendable::store("cannot store a signing secret", e))?;
    }
    let SealedSecrets { current, previous } = sealed;
    let now = unix_ms(time::OffsetDateTime::now_utc());
    let previous = previous.filter(|(_, until)| *until > now).map(|(s, _)| s);
    current
        .into_iter()
        .chain(previous)
        .map(|s| {
            let opened = keys.open(&s, destination_id).map_err(|_| {
                Unsendable::Destination(
                    "the signing secret does not open with this server key".to_owned(),
                )
            })?;
            String::from_utf8(opened)
                .map_err(|_| Unsendable::Destination("the signing secret is damaged".to_owned()))
        })
        .collect()
}

/// The senders in flight on this node per destination and per account, each at most its share of
/// the `--webhook-concurrency` senders: a quarter for one destination, half for one account
/// (at least one each). The first claim leaves aside what is at its share ([`Shares::busy`]);
/// the senders beyond the `reserve` (a quarter) then go to what waits beyond its share, sends
/// not counted here. So one receiver's backlog may use three quarters of the senders while
/// nothing else is due, and a quarter always stays for the rest.
struct Shares {
    per_destination: usize,
    per_account: usize,
    /// The senders kept for deliveries within their share: what waits beyond its share gets
    /// only the others.
    reserve: usize,
    counts: Arc<Mutex<Counts>>,
    /// Told when a send ends.
    ended: Arc<tokio::sync::Notify>,
}

#[derive(Default)]
struct Counts {
    destinations: HashMap<String, usize>,
    accounts: HashMap<String, usize>,
}

/// One send's place in its destination's and account's shares, given back when dropped.
struct Share {
    counts: Arc<Mutex<Counts>>,
    destination: String,
    account: String,
    /// The shares it counts in: [`Shares::per_destination`], [`Shares::per_account`].
    caps: (usize, usize),
}

impl Share {
    /// Whether its destination's or its account's share is full (so a claim left it aside).
    fn is_full(&self) -> bool {
        let counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        let count = |map: &HashMap<String, usize>, id: &str| map.get(id).copied().unwrap_or(0);
        count(&counts.destinations, &self.destination) >= self.caps.0
            || count(&counts.accounts, &self.account) >= self.caps.1
    }
}

impl Shares {
    fn new(concurrency: usize) -> Shares {
        Shares {
            per_destination: concurrency.div_ceil(4),
            per_account: concurrency.div_ceil(2),
            reserve: concurrency.div_ceil(4),
            counts: Arc::default(),
            ended: Arc::default(),
        }
    }

    fn counts(&self) -> std::sync::MutexGuard<'_, Counts> {
        self.counts.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The destinations and accounts at their share.
    fn busy(&self) -> BusyTargets {
        let counts = self.counts();
        let full = |map: &HashMap<String, usize>, share: usize| -> Vec<String> {
            map.iter()
                .filter(|(_, n)| **n >= share)
                .map(|(id, _)| id.clone())
                .collect()
        };
        BusyTargets {
            destinations: full(&counts.destinations, self.per_destination),
            accounts: full(&counts.accounts, self.per_account),
        }
    }

    /// A place for `delivery`, or `None` when its destination or account is at its share.
    fn take(&self, delivery: &ClaimedDelivery) -> Option<Share> {
        let mut counts = self.counts();
        let destination = counts
            .destinations
            .get(&delivery.destination_id)
            .copied()
            .unwrap_or(0);
        let account = counts
            .accounts
            .get(&delivery.account_id)
            .copied()
            .unwrap_or(0);
        if destination >= self.per_destination || account >= self.per_account {
            return None;
        }
        *counts
            .destinations
            .entry(delivery.destination_id.clone())
            .or_default() += 1;
        *counts
            .accounts
            .entry(delivery.account_id.clone())
            .or_default() += 1;
        Some(Share {
            counts: self.counts.clone(),
            destination: delivery.destination_id.clone(),
            account: delivery.account_id.clone(),
            caps: (self.per_destination, self.per_account),
        })
    }
}

impl Drop for Share {
    fn drop(&mut self) {
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        let Counts {
            destinations,
            accounts,
        } = &mut *counts;
        for (map, id) in [(destinations, &self.destination), (accounts, &self.account)] {
            if let Some(n) = map.get_mut(id) {
                *n -= 1;
                if *n == 0 {
                    map.remove(id);
                }
            }
        }
    }
}

/// The wait before retry `failed_attempts` (1 after the first failure): `base` doubling with
/// each failure up to [`MAX_DELAY_BASES`] bases, times a random factor in 0.8..1.2 so the
/// retries of many deliveries that failed together (a receiver's outage) spread out.
pub fn retry_delay(base: Duration, failed_attempts: u32) -> Duration {
    let doublings = failed_attempts.saturating_sub(1).min(20);
    let bases = (1u32 << doublings).min(MAX_DELAY_BASES);
    let jitter = rand::thread_rng().gen_range(0.8..1.2);
    (base * bases).mul_f64(jitter)
}

fn ms(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_double_from_the_base_up_to_a_cap_for_about_a_day() {
        let base = Duration::from_secs(5);
        let first = retry_delay(base, 1);
        assert!(first >= Duration::from_secs(4) && first <= Duration::from_secs(6));
        let second = retry_delay(base, 2);
        assert!(second >= Duration::from_secs(8) && second <= Duration::from_secs(12));
        let cap = retry_delay(base, 30);
        assert!(cap <= Duration::from_secs(4 * 3600 * 12 / 10));
        let total: Duration = (1..MAX_ATTEMPTS)
            .map(|n| base * (1u32 << (n - 1)).min(MAX_DELAY_BASES))
            .sum();
        assert!(
            total > Duration::from_secs(18 * 3600) && total < Duration::from_secs(26 * 3600),
            "{total:?}"
        );
    }
}
