//! Helpers shared by the API areas' tests: a webhook destination to subscribe to, a tunnel
//! session put straight into the registry (as if an agent had connected), and the update events
//! of one object.

use crate::common::TestApp;
use serde_json::json;
use tunnel_core::ids::{IdKind, make_id};
use tunnel_core::resources::Ref;
use tunnel_core::resources::event::EventList;
use tunnel_core::resources::event_destination::EventDestination;
use tunnel_core::resources::tunnel_session::TunnelSession;
use tunnel_server::agents::LiveSession;

/// Creates a webhook destination; returns its id.
pub async fn destination(app: &TestApp) -> String {
    let d: EventDestination = app
        .created(
            "/event_destinations",
            json!({"description": "hook", "target": {"webhook": {"url": "https://example.com/hook"}}}),
        )
        .await;
    d.id
}

/// The `event_type` events of `object_id` (newest first, as the audit log lists them), and the
/// fields each changed, oldest first.
pub async fn updates(
    app: &TestApp,
    event_type: &str,
    object_id: &str,
) -> (EventList, Vec<Vec<String>>) {
    let log: EventList = app
        .fetch(&format!("/events?type={event_type}&object_id={object_id}"))
        .await;
    let changed = log
        .events
        .iter()
        .rev()
        .map(|e| e.changed_fields.clone())
        .collect();
    (log, changed)
}

/// Session number `n` of `account`, opened with `credential`, as the registry holds it.
pub fn session(app: &TestApp, n: u64, account: &str, credential: &str) -> LiveSession {
    let id = make_id(IdKind::TunnelSession, 1_700_000_000_000 + n, [n as u8; 14]);
    LiveSession {
        session: TunnelSession {
            uri: app.state.uri(&tunnel_core::paths::tunnel_session(&id)),
            id,
            agent_version: "3.4.0".into(),
            credential: Ref {
                id: credential.into(),
                uri: app.state.uri(&tunnel_core::paths::credential(credential)),
            },
            ip: "127.0.0.1".into(),
            metadata: String::new(),
            os: "linux".into(),
            region: "local".into(),
            started_at: "2026-01-01T00:00:00Z".into(),
            transport: "tunnel/v2".into(),
            agent_update_target: None,
            agent_update_checks: true,
            agent_update_state: None,
        },
        account_id: account.into(),
        credential_id: credential.into(),
        binds: Vec::new(),
    }
}
