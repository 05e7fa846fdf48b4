//! The agent's update state machine: idle → updating (for a while) → updated, restart pending.
//!
//! There is no release channel to download a binary from: the server names the target version
//! (from its `--agent-latest` catalogue, never across a major version) and the agent "installs"
//! it by waiting for the configured duration. After a restart the agent reports the target
//! version (see `commands::UPDATED_VERSION_ENV`).
//!
//! The server is told where the update stands ([`Updater::report`], sent over the channel when
//! the update starts, when it finishes, and when a session opens mid-update), because it refuses
//! a restart that would lose the update: while it is applied and for a while after. The report
//! holds durations on this process's monotonic clock, not timestamps, so the server's clock and
//! the agent's need not agree.
//!
//! The agent is the one place that decides every update refusal, because it alone knows both its
//! configuration (update checks on/off) and its state; the server only supplies the target.
//! The agent does not take that target on trust either: one that is not newer, or that is in
//! another major version, is refused as "no update available" (an update never crosses a major
//! version, whatever a misconfigured or hostile server asks).

use std::time::{Duration, Instant};
use tunnel_core::agent_protocol::{Refusal, UpdateReport};
use tunnel_core::version::Version;

/// Where the agent is in an update.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UpdateState {
    Idle,
    Updating {
        target: Version,
        until: Instant,
    },
    /// Updated (at `at`); the new version runs after the next restart.
    Updated {
        target: Version,
        at: Instant,
    },
}

/// The update machine of one agent process (it survives reconnects, not restarts).
#[derive(Debug, Clone)]
pub struct Updater {
    state: UpdateState,
    update_checks: bool,
    duration: Duration,
    /// The version this process runs (reports); `None` if it is not a version, in which case
    /// no target can be judged newer and every update is refused.
    current: Option<Version>,
    /// Whether the finish of the last update was taken ([`Updater::take_finished`]): the state
    /// turns `Updated` whenever something reads it after the deadline, and that read must not
    /// swallow the one announcement of the finish (event and report).
    finish_taken: bool,
}

impl Updater {
    pub fn new(update_checks: bool, duration: Duration, current: Option<Version>) -> Updater {
        Updater {
            state: UpdateState::Idle,
            update_checks,
            duration,
            current,
            finish_taken: false,
        }
    }

    /// The state at `now`: an update whose time has come is complete.
    pub fn state(&mut self, now: Instant) -> &UpdateState {
        if let UpdateState::Updating { target, until } = self.state
            && now >= until
        {
            self.state = UpdateState::Updated { target, at: until };
        }
        &self.state
    }

    /// When the finish of the last update is due to be announced: its deadline, while it runs
    /// or once it is complete but not yet taken ([`Updater::take_finished`]); `None` otherwise.
    pub fn deadline(&self) -> Option<Instant> {
        match self.state {
            UpdateState::Updating { until, .. } => Some(until),
            UpdateState::Updated { at, .. } if !self.finish_taken => Some(at),
            _ => None,
        }
    }

    /// The version an update finished with, once per update: the cue to report the finish to
    /// the server and announce it.
    pub fn take_finished(&mut self, now: Instant) -> Option<Version> {
        let target = self.pending_version(now).filter(|_| !self.finish_taken)?;
        self.finish_taken = true;
        Some(target)
    }

    /// The version to report after a restart, if an update completed.
    pub fn pending_version(&mut self, now: Instant) -> Option<Version> {
        match self.state(now) {
            UpdateState::Updated { target, .. } => Some(*target),
            _ => None,
        }
    }

    /// What to tell the server about the update at `now`; `None` while idle.
    pub fn report(&mut self, now: Instant) -> Option<UpdateReport> {
        let ms = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        match self.state(now) {
            UpdateState::Idle => None,
            UpdateState::Updating { target, until } => Some(UpdateReport::Updating {
                target: target.to_string(),
                remaining_ms: ms(until.saturating_duration_since(now)),
            }),
            UpdateState::Updated { target, at } => Some(UpdateReport::Updated {
                version: target.to_string(),
                elapsed_ms: ms(now.saturating_duration_since(*at)),
            }),
        }
    }

    /// Handles an update command. The order of the checks is the order of precedence: an
    /// agent busy updating says so even if no newer version is known any more.
    pub fn request(&mut self, target: Option<&str>, now: Instant) -> Result<Version, Refusal> {
        match self.state(now) {
            UpdateState::Updating { .. } => return Err(Refusal::UpdateInProgress),
            UpdateState::Updated { .. } => return Err(Refusal::UpdatedNotRestarted),
            UpdateState::Idle => {}
        }
        if !self.update_checks {
            return Err(Refusal::UpdateChecksDisabled);
        }
        // An unparseable target is treated as "nothing to update to" rather than trusted.
        let target = target
            .and_then(Version::parse)
            .filter(|target| is_update(self.current, *target))
            .ok_or(Refusal::NoUpdateAvailable)?;
        self.finish_taken = false;
        self.state = UpdateState::Updating {
            target,
            until: now + self.duration,
        };
        Ok(target)
    }
}

/// Whether `target` is an update of `current`: same major version, and newer.
fn is_update(current: Option<Version>, target: Version) -> bool {
    current.is_some_and(|current| target.major == current.major && target > current)
}

#[cfg(test)]
mod tests {
    use super::*;

    const D: Duration = Duration::from_secs(3);

    fn updater(update_checks: bool) -> Updater {
        Updater::new(update_checks, D, Version::parse("3.4.0"))
    }

    #[test]
    fn only_a_newer_version_of_the_same_major_is_accepted() {
        let t0 = Instant::now();
        for refused in ["4.0.0", "2.9.9", "3.4.0", "3.3.9", "3.0.0", "10.4.1"] {
            assert_eq!(
                updater(true).request(Some(refused), t0),
                Err(Refusal::NoUpdateAvailable),
                "{refused}"
            );
        }
        for accepted in ["3.4.1", "3.5.0", "3.40.0"] {
            assert_eq!(
                updater(true).request(Some(accepted), t0),
                Ok(Version::parse(accepted).unwrap()),
                "{accepted}"
            );
        }
        // No known current version: nothing can be judged newer.
        assert_eq!(
            Updater::new(true, D, None).request(Some("3.4.1"), t0),
            Err(Refusal::NoUpdateAvailable)
        );
    }

    #[test]
    fn update_goes_idle_updating_updated() {
        let t0 = Instant::now();
        let mut u = updater(true);
        assert_eq!(u.report(t0), None);
        assert_eq!(
            u.request(Some("3.4.1"), t0),
            Ok(Version::parse("3.4.1").unwrap())
        );
        assert!(matches!(u.state(t0), UpdateState::Updating { .. }));
        assert_eq!(u.deadline(), Some(t0 + D));
        assert_eq!(
            u.report(t0 + Duration::from_secs(1)),
            Some(UpdateReport::Updating {
                target: "3.4.1".into(),
                remaining_ms: 2000
            })
        );
        assert_eq!(u.pending_version(t0), None);
        assert_eq!(
            u.request(Some("3.4.1"), t0 + Duration::from_secs(1)),
            Err(Refusal::UpdateInProgress)
        );
        assert_eq!(u.pending_version(t0 + D), Version::parse("3.4.1"));
        // Finished at its deadline, however late it is noticed.
        assert_eq!(
            u.report(t0 + D + Duration::from_millis(250)),
            Some(UpdateReport::Updated {
                version: "3.4.1".into(),
                elapsed_ms: 250
            })
        );
        assert_eq!(
            u.request(Some("3.4.1"), t0 + D),
            Err(Refusal::UpdatedNotRestarted)
        );
        // Complete, but its finish not yet announced: still due, once.
        assert_eq!(u.deadline(), Some(t0 + D));
        assert_eq!(u.take_finished(t0 + D), Version::parse("3.4.1"));
        assert_eq!(u.take_finished(t0 + D), None);
        assert_eq!(u.deadline(), None);
    }

    #[test]
    fn refusals() {
        let t0 = Instant::now();
        assert_eq!(
            updater(false).request(Some("3.4.1"), t0),
            Err(Refusal::UpdateChecksDisabled)
        );
        assert_eq!(
            updater(true).request(None, t0),
            Err(Refusal::NoUpdateAvailable)
        );
        assert_eq!(
            updater(true).request(Some("garbage"), t0),
            Err(Refusal::NoUpdateAvailable)
        );
        // Checks disabled wins over "nothing to update to": it is the agent's configuration.
        assert_eq!(
            updater(false).request(None, t0),
            Err(Refusal::UpdateChecksDisabled)
        );
    }
}
