//! A session's update as the server knows it: what its agent reported over the channel
//! (`UpdateState`), anchored to the server's own clock on receipt so agent and server clocks
//! need not agree. It decides whether a restart must wait (while an update is applied, and for
//! the wait after it finished, docs/api/tunnel_sessions.md) and how the session shows it
//! (`agent_update_state`).

use std::time::{Duration, Instant};
use tunnel_core::agent_protocol::UpdateReport;
use tunnel_core::resources::tunnel_session::AgentUpdateState;
use tunnel_core::version::Version;

/// A session's update as the server knows it, on the server's clock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum UpdateProgress {
    /// Being applied; expected to finish at `until` (the agent's estimate, from receipt).
    Updating { target: String, until: Instant },
    /// Finished at `finished_at` (receipt time, less what the agent said had elapsed).
    Updated {
        version: String,
        finished_at: Instant,
    },
}

/// Why a restart must wait, and for how long (whole seconds, rounded up, at least 1).
#[derive(Debug, Clone, PartialEq, Eq)]
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

impl UpdateProgress {
    /// The progress an agent's report means, received `now`; `None` for a report whose version
    /// is not a version (ignored, like any malformed message).
    pub(super) fn from_report(report: UpdateReport, now: Instant) -> Option<UpdateProgress> {
        let ms = |ms: u64| Duration::from_millis(ms).min(MAX_REPORTED);
        match report {
            UpdateReport::Updating {
                target,
                remaining_ms,
            } => Version::parse(&target).map(|v| UpdateProgress::Updating {
                target: v.to_string(),
                until: now + ms(remaining_ms),
            }),
            UpdateReport::Updated {
                version,
                elapsed_ms,
            } => Version::parse(&version).map(|v| UpdateProgress::Updated {
                version: v.to_string(),
                finished_at: now.checked_sub(ms(elapsed_ms)).unwrap_or(now),
            }),
        }
    }

    /// Whether (and how long) a restart must wait at `now`.
    pub(super) fn restart_wait(&self, wait: Duration, now: Instant) -> Option<RestartWait> {
        match self {
            // An update past its estimate still counts as running until the agent says it
            // finished: restarting then could still lose it. Retry soon rather than never.
            UpdateProgress::Updating { target, until } => Some(RestartWait::Updating {
                target: target.clone(),
                secs: ceil_secs(until.saturating_duration_since(now)).max(1),
            }),
            UpdateProgress::Updated {
                version,
                finished_at,
            } => {
                let left = (*finished_at + wait).saturating_duration_since(now);
                (!left.is_zero()).then(|| RestartWait::TooSoon {
                    version: version.clone(),
                    secs: ceil_secs(left),
                })
            }
        }
    }

    /// The wire form (`agent_update_state`) at `now`.
    pub(super) fn shown(&self, wait: Duration, now: Instant) -> AgentUpdateState {
        match self {
            UpdateProgress::Updating { target, .. } => AgentUpdateState::Updating {
                target: target.clone(),
            },
            UpdateProgress::Updated { version, .. } => AgentUpdateState::Updated {
                version: version.clone(),
                restart_available_in_secs: match self.restart_wait(wait, now) {
                    Some(RestartWait::TooSoon { secs, .. }) => secs,
                    _ => 0,
                },
            },
        }
    }
}
