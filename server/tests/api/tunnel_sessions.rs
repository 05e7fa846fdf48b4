//! Tunnel sessions (`docs/api/tunnel_sessions.md`): listed in pages and fetched from the
//! registry of connected agents, other accounts' sessions not found, and every session of a
//! credential closed when the credential is deleted.

use crate::common::{BASE, TestApp};
use crate::support::session;
use serde_json::json;
use tunnel_core::resources::credential::Credential;
use tunnel_core::resources::tunnel_session::{TunnelSession, TunnelSessionList};

#[tokio::test]
async fn tunnel_sessions_list_get_and_close_on_credential_delete() {
    let app = TestApp::new().await;
    let cred: Credential = app.created("/credentials", json!({})).await;
    let cid = cred.id.clone();
    for n in 0..5 {
        app.state
            .registry
            .insert(session(&app, n, &app.account_id, &cid));
    }
    let foreign = session(&app, 9, &app.other_account_id, "cr_other");
    app.state.registry.insert(foreign.clone());

    let page1 = app.get("/tunnel_sessions?limit=3").send(&app).await;
    assert_eq!(page1.status, 200, "{}", page1.text);
    let page1: TunnelSessionList = page1.body();
    let items = &page1.tunnel_sessions;
    assert_eq!(items.len(), 3);
    assert!(items[0].id > items[1].id);
    let next = page1.next_page_uri.clone().unwrap_or_default();
    assert_eq!(
        next,
        format!("{BASE}/tunnel_sessions?limit=3&before_id={}", items[2].id)
    );
    let page2: TunnelSessionList = app.get(&next).send(&app).await.body();
    assert_eq!(page2.tunnel_sessions.len(), 2);
    assert_eq!(page2.next_page_uri, None);

    let one = app.get(&items[0].uri).send(&app).await;
    assert_eq!(one.status, 200);
    assert_eq!(one.body::<TunnelSession>(), items[0]);
    app.gone(&format!("/tunnel_sessions/{}", foreign.session.id))
        .await;

    app.deleted(&format!("/credentials/{cid}")).await;
    let after: TunnelSessionList = app.get("/tunnel_sessions").send(&app).await.body();
    assert!(after.tunnel_sessions.is_empty());
    assert!(
        app.state
            .registry
            .get(&app.other_account_id, &foreign.session.id)
            .is_some()
    );
}
