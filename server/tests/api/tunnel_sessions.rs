//! Tunnel sessions (`docs/api/tunnel_sessions.md`): listed in pages and fetched from the
//! registry of connected agents, other accounts' sessions not found, and every session of a
//! credential closed when the credential is deleted, or those its changed ACL refuses.

use crate::common::{BASE, TestApp};
use crate::support::session;
use serde_json::json;
use tunnel_core::acl::Bind;
use tunnel_core::resources::credential::Credential;
use tunnel_core::resources::tunnel_session::{TunnelSession, TunnelSessionList};

#[tokio::test]
async fn tunnel_sessions_list_get_and_close_on_credential_delete() {
    let app = TestApp::new().await;
    let cred: Credential = app.created("/credentials", json!({})).await;
    let cid = cred.id.clone();
    for n in 0..5 {
        let live = session(&app, n, &app.account_id, &cid);
        app.state.sessions().register(live).await.unwrap();
    }
    let foreign = session(&app, 9, &app.other_account_id, "cr_other");
    app.state
        .sessions()
        .register(foreign.clone())
        .await
        .unwrap();

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
    // Oldest first, in pages too.
    let oldest: TunnelSessionList = app.fetch("/tunnel_sessions?order=oldest&limit=3").await;
    let later = oldest.next_page_uri.clone().unwrap_or_default();
    let rest: TunnelSessionList = app.get(&later).send(&app).await.body();
    let ids: Vec<&str> = oldest
        .tunnel_sessions
        .iter()
        .chain(&rest.tunnel_sessions)
        .map(|s| s.id.as_str())
        .collect();
    let mut expected: Vec<&str> = items
        .iter()
        .chain(&page2.tunnel_sessions)
        .map(|s| s.id.as_str())
        .collect();
    expected.reverse();
    assert_eq!(ids, expected);

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

/// The ids of the caller's live sessions, newest first.
async fn session_ids(app: &TestApp) -> Vec<String> {
    let list: TunnelSessionList = app.fetch("/tunnel_sessions").await;
    list.tunnel_sessions.into_iter().map(|s| s.id).collect()
}

#[tokio::test]
async fn a_changed_acl_closes_exactly_the_sessions_it_refuses() {
    let app = TestApp::new().await;
    let cred: Credential = app
        .created("/credentials", json!({"acl": ["bind:*.example.com"]}))
        .await;
    let other: Credential = app.created("/credentials", json!({})).await;
    let binding = async |n: u64, credential: &str, binds: &[&str]| {
        let mut live = session(&app, n, &app.account_id, credential);
        live.binds = binds.iter().map(|b| Bind::parse(b).unwrap()).collect();
        let id = live.session.id.clone();
        app.state.sessions().register(live).await.unwrap();
        id
    };
    let api = binding(1, &cred.id, &["api.example.com"]).await;
    let web = binding(2, &cred.id, &["web.example.com"]).await;
    let nothing = binding(3, &cred.id, &[]).await;
    // Another credential's session binding the same is not this ACL's business.
    let elsewhere = binding(4, &other.id, &["web.example.com"]).await;
    let path = format!("/credentials/{}", cred.id);
    let all = vec![elsewhere.clone(), nothing.clone(), web.clone(), api.clone()];

    // A description, the same ACL, a wider ACL: nobody is refused, nobody disconnected.
    let _: Credential = app.patched(&path, json!({"description": "renamed"})).await;
    assert_eq!(session_ids(&app).await, all);
    let _: Credential = app
        .patched(&path, json!({"acl": ["bind:*.example.com"]}))
        .await;
    assert_eq!(session_ids(&app).await, all);
    let _: Credential = app
        .patched(
            &path,
            json!({"acl": ["bind:*.example.com", "bind:env=prod"]}),
        )
        .await;
    assert_eq!(session_ids(&app).await, all);

    // Narrowed: the session binding `web.example.com` goes, the others stay.
    let patched: Credential = app
        .patched(&path, json!({"acl": ["bind:api.example.com"]}))
        .await;
    assert_eq!(patched.acl, ["bind:api.example.com"]);
    assert_eq!(
        session_ids(&app).await,
        vec![elsewhere.clone(), nothing.clone(), api.clone()]
    );
    app.gone(&format!("/tunnel_sessions/{web}")).await;

    // Emptied: an empty ACL permits everything, so no one else goes either.
    let _: Credential = app.patched(&path, json!({"acl": []})).await;
    assert_eq!(session_ids(&app).await, vec![elsewhere, nothing, api]);
}
