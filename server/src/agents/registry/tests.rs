//! Unit tests of the registry: sessions per account, closing, update state and restart waits,
//! commands to sessions without a connection.

use super::*;
use tunnel_core::agent_protocol::UpdateReport;
use tunnel_core::ids::{IdKind, make_id};
use tunnel_core::resources::Ref;
use tunnel_core::resources::tunnel_session::AgentUpdateState;

fn live(n: u64, account: &str, credential: &str) -> LiveSession {
    let id = make_id(IdKind::TunnelSession, n, [0; 14]);
    LiveSession {
        session: TunnelSession {
            id: id.clone(),
            uri: format!("http://x/api/tunnel_sessions/{id}"),
            agent_version: "3.4.0".into(),
            credential: Ref {
                id: credential.into(),
                uri: String::new(),
            },
            ip: "127.0.0.1".into(),
            metadata: String::new(),
            os: "linux".into(),
            region: "local".into(),
            started_at: "2026-01-01T00:00:00Z".into(),
            transport: "tunnel/v2".into(),
            agent_update_target: Some("3.4.1".into()),
            agent_update_checks: true,
            agent_update_state: None,
        },
        account_id: account.into(),
        credential_id: credential.into(),
        binds: Vec::new(),
    }
}

#[test]
fn a_session_is_found_in_its_account_only_and_closed_once() {
    let registry = Registry::default();
    let l = live(1, "a", "cr_1");
    let id = l.session.id.clone();
    let mut control = registry.open(l);
    assert!(registry.get("b", &id).is_none());
    assert_eq!(registry.get("a", &id).unwrap().credential_id, "cr_1");
    let msg = || "gone".to_owned();
    let code = ErrorCode::CredentialDeleted;
    assert!(
        registry
            .close("b", &id, code, msg(), &Cause::system())
            .is_none()
    );
    assert!(
        registry
            .close("a", &id, code, msg(), &Cause::system())
            .is_some()
    );
    assert!(matches!(control.try_recv(), Ok(Control::Close { .. })));
    assert!(
        registry
            .close("a", &id, code, msg(), &Cause::system())
            .is_none()
    );
    assert!(registry.is_empty());
}

#[test]
fn dropping_every_session_closes_every_queue() {
    let registry = Registry::default();
    let mut queues: Vec<_> = (1..=3)
        .map(|n| registry.open(live(n, "a", "cr_1")))
        .collect();
    assert_eq!(registry.len(), 3);
    assert_eq!(registry.drop_all(), 3);
    assert!(registry.is_empty());
    for queue in &mut queues {
        assert!(matches!(
            queue.try_recv(),
            Err(tokio::sync::mpsc::error::TryRecvError::Disconnected)
        ));
    }
}

#[test]
fn restart_waits_while_updating_and_for_the_wait_after_it() {
    let registry = Registry::default();
    let l = live(1, "a", "cr_1");
    let id = l.session.id.clone();
    registry.insert(l);
    let t0: i64 = 1_700_000_000_000;
    let wait = |now| registry.restart_wait("a", &id, now);
    let report = |report, at| {
        if let Some(progress) = UpdateProgress::from_report(report, at) {
            registry.report_update(&id, progress);
        }
    };
    let default_wait = Timings::default().update_restart_wait;
    assert_eq!(wait(t0), None);

    let updating = |target: &str, remaining_ms| UpdateReport::Updating {
        target: target.into(),
        remaining_ms,
    };
    report(updating("3.4.1", 2500), t0);
    let updating_for = |secs| {
        Some(RestartWait::Updating {
            target: "3.4.1".into(),
            secs,
        })
    };
    assert_eq!(wait(t0), updating_for(3));
    assert_eq!(wait(t0 + 2000), updating_for(1));
    // Past its estimate but not reported finished: still updating, retry in a second.
    assert_eq!(wait(t0 + 9000), updating_for(1));
    let progress = UpdateProgress::from_report(updating("3.4.1", 2500), t0).unwrap();
    assert_eq!(
        progress.shown(default_wait, t0),
        AgentUpdateState::Updating {
            target: "3.4.1".into()
        }
    );
    // Another account does not see it; a malformed report changes nothing.
    assert_eq!(registry.restart_wait("b", &id, t0), None);
    report(updating("not a version", 1), t0);
    assert_eq!(wait(t0), updating_for(3));

    // Finished 400 ms before the report arrived at t1: the default 10 s count from then.
    let t1 = t0 + 3000;
    let updated = || UpdateReport::Updated {
        version: "3.4.1".into(),
        elapsed_ms: 400,
    };
    report(updated(), t1);
    let too_soon = |secs| {
        Some(RestartWait::TooSoon {
            version: "3.4.1".into(),
            secs,
        })
    };
    assert_eq!(UPDATE_RESTART_WAIT_SECS, 10);
    assert_eq!(wait(t1), too_soon(10)); // 9.6 s left
    assert_eq!(wait(t1 + 599), too_soon(10));
    assert_eq!(wait(t1 + 600), too_soon(9));
    assert_eq!(wait(t1 + 9599), too_soon(1));
    assert_eq!(wait(t1 + 9600), None);
    let progress = UpdateProgress::from_report(updated(), t1).unwrap();
    assert_eq!(
        progress.shown(default_wait, t1 + 600),
        AgentUpdateState::Updated {
            version: "3.4.1".into(),
            restart_available_in_secs: 9,
        }
    );
    // The stored form round-trips, so every node shows the same progress.
    let stored = serde_json::to_string(&progress).unwrap();
    assert_eq!(
        serde_json::from_str::<UpdateProgress>(&stored).unwrap(),
        progress
    );
    // An agent cannot push the finish time arbitrarily far back (nor the wait forward).
    let t2 = t1 + 20_000;
    let long_ago = UpdateReport::Updated {
        version: "3.4.1".into(),
        elapsed_ms: u64::MAX,
    };
    report(long_ago, t2);
    assert_eq!(wait(t2), None);
}

#[tokio::test]
async fn a_command_to_a_session_without_a_connection_reports_it_ended() {
    let registry = Registry::default();
    let l = live(1, "a", "cr_1");
    let id = l.session.id.clone();
    registry.insert(l);
    assert_eq!(
        registry
            .command("a", &id, AgentCommand::Stop, None, &Cause::system())
            .await,
        Err(CommandError::Ended)
    );
    assert_eq!(
        registry
            .command("b", &id, AgentCommand::Stop, None, &Cause::system())
            .await,
        Err(CommandError::NotFound)
    );
}
