//! API keys and `/me` (`docs/api/api_keys.md`): the key is answered once and works at once; a
//! deleted key fails with the next request; members reach only their own keys, admins every key
//! of the account and may create keys for others; every write is in the audit log without the
//! key.

use crate::common::TestApp;
use serde_json::json;
use tunnel_core::resources::api_key::{ApiKey, ApiKeyList, Me};
use tunnel_core::resources::event::EventList;

#[tokio::test]
async fn a_key_is_shown_once_works_at_once_and_is_revoked_by_its_delete() {
    let app = TestApp::new().await;
    let created: ApiKey = app
        .created(
            "/api_keys",
            json!({"description": "ci", "metadata": "{\"team\":\"ops\"}"}),
        )
        .await;
    assert!(created.id.starts_with("ak_"));
    assert_eq!(created.owner_id, app.admin_id);
    assert_eq!(created.description, "ci");
    assert!(
        created
            .uri
            .ends_with(&format!("/api/api_keys/{}", created.id))
    );
    let key = created.token.clone().expect("the key, once");
    // It acts as its owner from the next request on.
    let me = app.get("/me").key(&key).send(&app).await;
    assert_eq!(me.status, 200, "{}", me.text);
    let me: Me = me.body();
    assert_eq!(me.principal_id, app.admin_id);
    assert_eq!(me.api_key_id, created.id);
    // Never shown again: not by get, list or update.
    let path = format!("/api_keys/{}", created.id);
    let got: ApiKey = app.fetch(&path).await;
    assert_eq!(got.token, None);
    assert_eq!(
        ApiKey {
            token: None,
            ..created.clone()
        },
        got
    );
    let list: ApiKeyList = app.fetch("/api_keys").await;
    assert!(list.keys.iter().all(|k| k.token.is_none()));
    assert!(list.keys.iter().any(|k| k.id == created.id));
    let patched: ApiKey = app
        .patched(&path, json!({"description": "ci runner", "id": created.id}))
        .await;
    assert_eq!(patched.description, "ci runner");
    assert_eq!(patched.metadata, "{\"team\":\"ops\"}");
    assert_eq!(patched.token, None);
    // Deleted: the very next request with it is a 401, and it is gone from the list.
    app.deleted(&path).await;
    app.get("/me")
        .key(&key)
        .send(&app)
        .await
        .error(401, "ERR_TUNNEL_104");
    app.gone(&path).await;
    let list: ApiKeyList = app.fetch("/api_keys").await;
    assert!(list.keys.iter().all(|k| k.id != created.id));
    // The audit log has the three writes, none of them with the key.
    let log: EventList = app.fetch("/events?type=api_key_created.v0").await;
    assert_eq!(log.events.len(), 1);
    for kind in ["created", "updated", "deleted"] {
        let log: EventList = app.fetch(&format!("/events?type=api_key_{kind}.v0")).await;
        assert_eq!(log.events.len(), 1, "{kind}");
        assert_eq!(log.events[0].object_id, created.id);
        assert_eq!(log.events[0].object["token"], serde_json::Value::Null);
        assert!(!log.events[0].object.to_string().contains(&key));
    }
}

#[tokio::test]
async fn a_key_deleted_with_itself_answers_and_then_fails() {
    let app = TestApp::new().await;
    let created: ApiKey = app.created("/api_keys", json!({})).await;
    let key = created.token.unwrap();
    let resp = app
        .delete(&format!("/api_keys/{}", created.id))
        .key(&key)
        .send(&app)
        .await;
    assert_eq!(resp.status, 204, "{}", resp.text);
    app.get("/api_keys")
        .key(&key)
        .send(&app)
        .await
        .error(401, "ERR_TUNNEL_104");
}

#[tokio::test]
async fn members_reach_only_their_own_keys_and_admins_every_key_of_the_account() {
    let app = TestApp::new().await;
    let admins: ApiKey = app
        .created("/api_keys", json!({"description": "admin's"}))
        .await;
    let mine: ApiKey = app
        .created_by(
            &app.user_key,
            "/api_keys",
            json!({"description": "member's"}),
        )
        .await;
    assert_eq!(mine.owner_id, app.user_id);
    // A member lists their own keys only (the one from the operator's command and this one).
    let list = app.get("/api_keys").key(&app.user_key).send(&app).await;
    let list: ApiKeyList = list.body();
    assert_eq!(list.keys.len(), 2);
    assert!(list.keys.iter().all(|k| k.owner_id == app.user_id));
    // The admin's key does not exist for them, whatever the operation.
    let theirs = format!("/api_keys/{}", admins.id);
    for call in [
        app.get(&theirs),
        app.patch(&theirs, json!({"description": "taken"})),
        app.delete(&theirs),
    ] {
        call.key(&app.user_key)
            .send(&app)
            .await
            .error(404, "ERR_TUNNEL_120");
    }
    let still: ApiKey = app.fetch(&theirs).await;
    assert_eq!(still.description, "admin's");
    // Nor may they make a key for someone else.
    app.post("/api_keys", json!({"owner_id": app.admin_id}))
        .key(&app.user_key)
        .send(&app)
        .await
        .error_at(403, "ERR_TUNNEL_123", "owner_id");
    // The admin sees every key of the account, manages the member's, and makes keys for them.
    let all: ApiKeyList = app.fetch("/api_keys").await;
    for id in [&admins.id, &mine.id] {
        assert!(all.keys.iter().any(|k| &k.id == id), "{id}");
    }
    let renamed: ApiKey = app
        .patched(
            &format!("/api_keys/{}", mine.id),
            json!({"metadata": "rotated"}),
        )
        .await;
    assert_eq!(renamed.metadata, "rotated");
    let given: ApiKey = app
        .created("/api_keys", json!({"owner_id": app.user_id}))
        .await;
    assert_eq!(given.owner_id, app.user_id);
    let me = app.get("/me").key(&given.token.unwrap()).send(&app).await;
    assert_eq!(me.body::<Me>().principal_id, app.user_id);
    app.post(
        "/api_keys",
        json!({"owner_id": "usr_0ERcyeo9KQAaQzoO1Ezm0IeAD4V"}),
    )
    .send(&app)
    .await
    .error_at(400, "ERR_TUNNEL_124", "owner_id");
    app.post("/api_keys", json!({"owner_id": "cr_1"}))
        .send(&app)
        .await
        .error_at(400, "ERR_TUNNEL_114", "owner_id");
    // Another account's keys are not found, even by an admin.
    let foreign: ApiKey = app.created_by(&app.other_key, "/api_keys", json!({})).await;
    app.gone(&format!("/api_keys/{}", foreign.id)).await;
    app.delete(&format!("/api_keys/{}", mine.id))
        .key(&app.user_key)
        .send(&app)
        .await;
    app.gone(&format!("/api_keys/{}", mine.id)).await;
}

#[tokio::test]
async fn me_names_the_principal_its_account_and_whether_it_is_an_admin() {
    let app = TestApp::new().await;
    let me: Me = app.fetch("/me").await;
    assert_eq!(me.principal_id, app.admin_id);
    assert_eq!(me.principal_kind, "user");
    assert!(me.is_admin);
    assert_eq!(me.account_id, app.account_id);
    assert_eq!(me.account_name, "first");
    let member = app.get("/me").key(&app.user_key).send(&app).await;
    let member: Me = member.body();
    assert_eq!(member.principal_id, app.user_id);
    assert!(!member.is_admin);
    let bot = app.principal(&app.account_id, true).await;
    let me = app.get("/me").key(&bot.api_key).send(&app).await;
    let me: Me = me.body();
    assert_eq!((me.principal_kind.as_str(), me.is_admin), ("bot", false));
    // No parameters, and no access without a key.
    app.get("/me?limit=1")
        .send(&app)
        .await
        .error(400, "ERR_TUNNEL_115");
    app.get("/me")
        .without("authorization")
        .send(&app)
        .await
        .error(401, "ERR_TUNNEL_102");
}
