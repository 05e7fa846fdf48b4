//! Retention of the audit log (`--event-retention`, docs/api/events.md): a background task
//! deletes events older than the retention, with their deliveries and attempts, in small
//! batches of short transactions, so requests never wait long behind it.

use crate::store::Store;
use std::time::Duration;

/// Events deleted per transaction.
const BATCH: u32 = 1_000;

/// How often the task looks for expired events: hourly, or more often for a retention shorter
/// than a few hours (a tenth of it, at least every second), so nothing outlives it by much.
fn period(keep: Duration) -> Duration {
    (keep / 10).clamp(Duration::from_secs(1), Duration::from_secs(3600))
}

/// Spawns the pruning task; it runs until the runtime stops.
pub fn spawn(store: Store, keep: Duration) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(period(keep));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            let deleted = prune(&store, keep).await;
            if deleted > 0 {
                tracing::info!(deleted, "pruned events past their retention");
            }
        }
    })
}

/// Deletes every event older than `keep`, a batch at a time; the number deleted. A database
/// error is logged and retried at the next period.
pub async fn prune(store: &Store, keep: Duration) -> u64 {
    // A retention reaching before the calendar's start keeps everything.
    let Some(before) = time::Duration::try_from(keep)
        .ok()
        .and_then(|keep| time::OffsetDateTime::now_utc().checked_sub(keep))
    else {
        return 0;
    };
    let mut total = 0;
    loop {
        match store.prune_events(before, BATCH).await {
            Ok(n) => {
                total += n;
                if n < u64::from(BATCH) {
                    return total;
                }
                // Let waiting writers take the lock between batches.
                tokio::task::yield_now().await;
            }
            Err(e) => {
                tracing::error!(error = %e, "pruning events failed");
                return total;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_retention_longer_than_the_calendar_keeps_everything() {
        let store = Store::open(&crate::store::DatabaseUrl::SqliteMemory)
            .await
            .unwrap();
        let forever = Duration::from_secs(5_000_000 * 86_400);
        assert_eq!(prune(&store, forever).await, 0);
        assert_eq!(prune(&store, Duration::MAX).await, 0);
    }

    #[test]
    fn the_period_follows_short_retentions_and_is_hourly_otherwise() {
        assert_eq!(
            period(Duration::from_secs(90 * 86_400)),
            Duration::from_secs(3600)
        );
        assert_eq!(period(Duration::from_secs(60)), Duration::from_secs(6));
        assert_eq!(period(Duration::from_millis(100)), Duration::from_secs(1));
    }
}
