//! A session's update as the server knows it: what its agent reported over the channel
//! (`UpdateState`), anchored to the receiving node's clock on receipt so agent and server clocks
//! need not agree. It decides whether a restart must wait (while an update is applied, and for
//! the wait after it finished, docs/api/tunnel_sessions.md) and how the session shows it
//! (`agent_update_state`).
//!
//! Times are Unix ms rather than a monotonic instant: the progress is kept in the session's row
//! too (`store::sessions`), so that every node of a cluster shows it.

use serde::{Deserialize, Serialize};
use std::time::Duration;
use tunnel_core::agent_protocol::UpdateReport;
use tunnel_core::resources::tunnel_session::AgentUpdateState;
use tunnel_core::version::Version;

/// A session's update as the server knows it, on the receiving node's clock (Unix ms).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum UpdateProgress {
    /// Being applied; expected to finish at `until_ms` (the agent's estimate, from receipt).
    Updating { target: String, until_ms: i64 },
    /// Finished at `finished_ms` (receipt time, less what the agent said had elapsed).
    Updated { version: String, finished_ms: i64 },
}

/// Why a restart must wait, and for how long (whole seconds, rounded up, at least 1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum RestartWait {
    /// The agent is applying an update to `target`.
    Updating { target: String, secs: u64 },
    /// The agent finished updating to `version` less than the wait ago.
    TooSoon { version: String, secs: u64 },
}

/// Whole seconds in `d`, rounded up.
pub fn ceil_secs(d: Duration) -> u64 {
    d.as_secs() + u64::from(d.subsec_nanos() > 0)
}

/// Longest update an agent may announce, and longest it may say has elapsed: bounds on what a
/// peer can make the server believe (an hour is far beyond any real update).
const MAX_REPORTED: Duration = Duration::from_secs(3600);

/// The time from `now_ms` until `until_ms`, zero when it has passed.
fn until(now_ms: i64, until_ms: i64) -> Duration {
    Duration::from_millis(u64::try_from(until_ms.saturating_sub(now_ms)).unwrap_or(0))
}

fn ms(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

impl UpdateProgress {
    /// The progress an agent's report means, received at `now_ms`; `None` for a report whose
    /// version is not a version (ignored, like any malformed message).
    pub fn from_report(report: UpdateReport, now_ms: i64) -> Option<UpdateProgress> {
        let bounded = |ms_given: u64| ms(Duration::from_millis(ms_given).min(MAX_REPORTED));
        match report {
            UpdateReport::Updating {
                target,
                remaining_ms,
            } => Version::parse(&target).map(|v| UpdateProgress::Updating {
                target: v.to_string(),
                until_ms: now_ms + bounded(remaining_ms),
            }),
            UpdateReport::Updated {
                version,
                elapsed_ms,
            } => Version::parse(&version).map(|v| UpdateProgress::Updated {
                version: v.to_string(),
                finished_ms: now_ms - bounded(elapsed_ms),
            }),
        }
    }

    /// Whether (and how long) a restart must wait at `now_ms`.
    pub fn restart_wait(&self, wait: Duration, now_ms: i64) -> Option<RestartWait> {
        match self {
            // An update past its estimate still counts as running until the agent says it
            // finished: restarting then could still lose it. Retry soon rather than never.
            UpdateProgress::Updating { target, until_ms } => Some(RestartWait::Updating {
                target: target.clone(),
                secs: ceil_secs(until(now_ms, *until_ms)).max(1),
            }),
            UpdateProgress::Updated {
                version,
                finished_ms,
            } => {
                let left = until(now_ms, finished_ms.saturating_add(ms(wait)));
                (!left.is_zero()).then(|| RestartWait::TooSoon {
                    version: version.clone(),
                    secs: ceil_secs(left),
                })
            }
        }
    }

    /// The wire form (`agent_update_state`) at `now_ms`.
    pub fn shown(&self, wait: Duration, now_ms: i64) -> AgentUpdateState {
        match self {
            UpdateProgress::Updating { target, .. } => AgentUpdateState::Updating {
                target: target.clone(),
            },
            UpdateProgress::Updated { version, .. } => AgentUpdateState::Updated {
                version: version.clone(),
                restart_available_in_secs: match self.restart_wait(wait, now_ms) {
                    Some(RestartWait::TooSoon { secs, .. }) => secs,
                    _ => 0,
                },
            },
        }
    }
}
