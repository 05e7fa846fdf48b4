//! Unit tests of the registry: paging per account, update state and restart waits, commands
//! to sessions without a connection.

use super::*;
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
fn lists_newest_first_per_account_with_pages() {
    let registry = Registry::default();
    for n in 1..=5 {
        registry.insert(live(n, "a", "cr_1"));
    }
    registry.insert(live(6, "b", "cr_2"));
    let (first, more) = registry.list("a", 2, None);
    assert!(more);
    assert_eq!(first.len(), 2);
    assert!(first[0].id > first[1].id);
    let (second, _) = registry.list("a", 10, Some(&first[1].id));
    assert_eq!(second.len(), 3);
    assert!(second.iter().all(|s| s.id < first[1].id));
    assert!(registry.get("b", &first[0].id).is_none());
    assert_eq!(registry.close_credential("cr_1", &Cause::system()).len(), 5);
    assert_eq!(registry.list("a", 10, None).0.len(), 0);
    assert_eq!(registry.list("b", 10, None).0.len(), 1);
}

#[test]
fn listing_stays_inside_the_account_even_next_to_similar_ids() {
    let registry = Registry::default();
    // "a" < "a\0…" < "ab": neighbours in key order that must never leak into "a"'s list.
    registry.insert(live(1, "a", "cr_1"));
    registry.insert(live(2, "ab", "cr_2"));
    registry.insert(live(3, "a", "cr_1"));
    registry.insert(live(4, "", "cr_3"));
    let (page, more) = registry.list("a", 10, None);
    assert!(!more);
    assert_eq!(page.len(), 2);
    assert!(page[0].id > page[1].id);
    assert_eq!(registry.list("ab", 10, None).0.len(), 1);
    assert_eq!(registry.list("", 10, None).0.len(), 1);
    let id = page[0].id.clone();
    assert!(registry.remove(&id).is_some());
    assert!(registry.remove(&id).is_none());
    assert_eq!(registry.list("a", 10, None).0.len(), 1);
}

#[test]
fn restart_waits_while_updating_and_for_the_wait_after_it() {
    let registry = Registry::default();
    let l = live(1, "a", "cr_1");
    let id = l.session.id.clone();
    registry.insert(l);
    // 3 s ago, so that the finish at `t1` below is about now for `get`, which reads the clock.
    let t0 = Instant::now() - Duration::from_secs(3);
    let wait = |now| registry.restart_wait("a", &id, now);
    let state = || registry.get("a", &id).unwrap().agent_update_state;
    assert_eq!(wait(t0), None);
    assert_eq!(state(), None);

    let updating = |target: &str, remaining_ms| UpdateReport::Updating {
        target: target.into(),
        remaining_ms,
    };
    registry.report_update(&id, updating("3.4.1", 2500), t0);
    let ms = Duration::from_millis;
    let updating_for = |secs| {
        Some(RestartWait::Updating {
            target: "3.4.1".into(),
            secs,
        })
    };
    assert_eq!(wait(t0), updating_for(3));
    assert_eq!(wait(t0 + ms(2000)), updating_for(1));
    // Past its estimate but not reported finished: still updating, retry in a second.
    assert_eq!(wait(t0 + ms(9000)), updating_for(1));
    assert_eq!(
        state(),
        Some(AgentUpdateState::Updating {
            target: "3.4.1".into()
        })
    );
    // Another account does not see it; a malformed report changes nothing.
    assert_eq!(registry.restart_wait("b", &id, t0), None);
    registry.report_update(&id, updating("not a version", 1), t0);
    assert_eq!(wait(t0), updating_for(3));

    // Finished 400 ms before the report arrived at t1: the default 10 s count from then.
    let t1 = t0 + ms(3000);
    let updated = UpdateReport::Updated {
        version: "3.4.1".into(),
        elapsed_ms: 400,
    };
    registry.report_update(&id, updated, t1);
    let too_soon = |secs| {
        Some(RestartWait::TooSoon {
            version: "3.4.1".into(),
            secs,
        })
    };
    assert_eq!(UPDATE_RESTART_WAIT_SECS, 10);
    assert_eq!(wait(t1), too_soon(10)); // 9.6 s left
    assert_eq!(wait(t1 + ms(599)), too_soon(10));
    assert_eq!(wait(t1 + ms(600)), too_soon(9));
    assert_eq!(wait(t1 + ms(9599)), too_soon(1));
    assert_eq!(wait(t1 + ms(9600)), None);
    match state() {
        Some(AgentUpdateState::Updated {
            version,
            restart_available_in_secs,
        }) => {
            assert_eq!(version, "3.4.1");
            assert!((9..=10).contains(&restart_available_in_secs));
        }
        other => panic!("{other:?}"),
    }
    // An agent cannot push the finish time arbitrarily far back (nor the wait forward).
    let t2 = t1 + ms(20_000);
    let long_ago = UpdateReport::Updated {
        version: "3.4.1".into(),
        elapsed_ms: u64::MAX,
    };
    registry.report_update(&id, long_ago, t2);
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
