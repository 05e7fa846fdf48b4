//! Lists (`docs/api/README.md`): pages newest first without duplicates or gaps, absolute
//! `next_page_uri`s, bad paging parameters, and the same paging on every list of the API.

use crate::common::{BASE, TestApp};
use crate::support::destination;
use serde_json::{Value, json};
use std::collections::HashSet;
use tunnel_core::resources::ListPage;
use tunnel_core::resources::backend::TunnelGroupBackendList;
use tunnel_core::resources::credential::{Credential, CredentialList};
use tunnel_core::resources::event_destination::EventDestinationList;
use tunnel_core::resources::event_subscription::EventSubscriptionList;
use tunnel_core::resources::ssh_ca::SshCertificateAuthorityList;
use tunnel_core::resources::tls_edge::TlsEdgeList;

#[tokio::test]
async fn pagination_newest_first_without_duplicates_or_gaps() {
    let app = TestApp::new().await;
    let mut created = Vec::new();
    for i in 0..7 {
        let c: Credential = app
            .created("/credentials", json!({"description": format!("c{i}")}))
            .await;
        created.push(c.id);
    }
    // Another account's resources never show up.
    app.post("/credentials", json!({}))
        .key(&app.other_key)
        .send(&app)
        .await;
    let mut seen = Vec::new();
    let mut next = format!("{BASE}/credentials?limit=3");
    let mut pages = 0;
    loop {
        let r = app.get(&next).send(&app).await;
        assert_eq!(r.status, 200, "{}", r.text);
        pages += 1;
        let page: CredentialList = r.body();
        assert!(page.credentials.len() <= 3);
        seen.extend(page.credentials.iter().map(|c| c.id.clone()));
        match page.next_page_uri {
            Some(uri) => {
                assert!(uri.starts_with(BASE), "absolute: {uri}");
                next = uri;
            }
            None => break,
        }
    }
    assert_eq!(pages, 3);
    let mut expected = created.clone();
    expected.reverse();
    assert_eq!(seen, expected, "newest first, no duplicates, no gaps");
    assert_eq!(seen.iter().collect::<HashSet<_>>().len(), 7);
    // Exactly a page: no next page.
    let r: CredentialList = app.get("/credentials?limit=7").send(&app).await.body();
    assert_eq!(r.next_page_uri, None);
    // Bad parameters.
    for q in [
        "limit=0",
        "limit=101",
        "limit=abc",
        "before_id=sshca_x",
        "before_id=cr_short",
    ] {
        let r = app.get(&format!("/credentials?{q}")).send(&app).await;
        r.error_at(400, "ERR_TUNNEL_116", q.split('=').next().unwrap());
    }
    let r = app.get("/credentials?limit=100").send(&app).await;
    assert_eq!(r.status, 200);
    let r = app.get("/credentials?page=2").send(&app).await;
    r.error_at(400, "ERR_TUNNEL_115", "page");
    app.get(&format!("/credentials/{}?limit=1", created[0]))
        .fails(&app, 400, "ERR_TUNNEL_115")
        .await;
}

/// Creates 3 resources at `path`, then reads the list in pages of 2: the ids of both pages,
/// which must hold `total` items (newest first), decoded as the list's wire type `L`.
async fn two_pages<L>(app: &TestApp, path: &str, body: Value, total: usize)
where
    L: ListPage + serde::de::DeserializeOwned + serde::Serialize,
    L::Item: serde::Serialize,
{
    for _ in 0..3 {
        app.create(path, body.clone()).await;
    }
    let first: L = app.get(&format!("{path}?limit=2")).send(app).await.body();
    assert_eq!(first.items().len(), 2, "{path}");
    let next = first.next_page_uri().unwrap_or_default().to_owned();
    let second: L = app.get(&next).send(app).await.body();
    let id = |item: &L::Item| {
        serde_json::to_value(item).unwrap()["id"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    let ids: Vec<String> = first.items().iter().chain(second.items()).map(id).collect();
    assert_eq!(ids.len(), total, "{path}");
    assert!(ids.windows(2).all(|w| w[0] > w[1]), "{path}: {ids:?}");
}

#[tokio::test]
async fn pagination_works_the_same_on_every_list() {
    let app = TestApp::new().await;
    let ed = destination(&app).await;
    two_pages::<SshCertificateAuthorityList>(&app, "/ssh_certificate_authorities", json!({}), 3)
        .await;
    two_pages::<EventSubscriptionList>(
        &app,
        "/event_subscriptions",
        json!({"sources": [{"type": "credential_created.v0"}], "destination_ids": [ed]}),
        3,
    )
    .await;
    two_pages::<TlsEdgeList>(&app, "/edges/tls", json!({}), 3).await;
    two_pages::<TunnelGroupBackendList>(&app, "/backends/tunnel_group", json!({}), 3).await;
    // One more than created: the subscriptions' destination.
    two_pages::<EventDestinationList>(
        &app,
        "/event_destinations",
        json!({"target": {"webhook": {"url": "https://e.example/"}}}),
        4,
    )
    .await;
    two_pages::<CredentialList>(&app, "/credentials", json!({}), 3).await;
}

#[tokio::test]
async fn oldest_first_pages_forward_and_keeps_the_search() {
    let app = TestApp::new().await;
    let mut matching = Vec::new();
    for i in 0..5 {
        let c: Credential = app
            .created("/credentials", json!({"description": format!("web-{i}")}))
            .await;
        matching.push(c.id);
        app.create("/credentials", json!({"description": "db"}))
            .await;
    }
    let mut seen = Vec::new();
    // `web-`, not `web`: a random id (searched too, case-insensitively) can hold `WeB`.
    let mut next = format!("{BASE}/credentials?limit=2&q=web-&order=oldest");
    loop {
        let page: CredentialList = app.get(&next).send(&app).await.body();
        seen.extend(page.credentials.iter().map(|c| c.id.clone()));
        match page.next_page_uri {
            Some(uri) => {
                assert!(
                    uri.contains("q=web-") && uri.contains("order=oldest"),
                    "{uri}"
                );
                next = uri;
            }
            None => break,
        }
    }
    assert_eq!(seen, matching, "oldest first, only the matches, no gaps");
    // `newest` is the default, said or not.
    let newest: CredentialList = app.fetch("/credentials?order=newest&limit=1").await;
    let default: CredentialList = app.fetch("/credentials?limit=1").await;
    assert_eq!(newest.credentials, default.credentials);
    assert_eq!(newest.next_page_uri, default.next_page_uri);
    for bad in ["order=", "order=asc", "order=OLDEST"] {
        app.get(&format!("/credentials?{bad}"))
            .fails(&app, 400, "ERR_TUNNEL_116")
            .await;
    }
    // Only where the search is offered: the audit log has its own order.
    app.get("/events?order=oldest")
        .fails(&app, 400, "ERR_TUNNEL_115")
        .await;
}
