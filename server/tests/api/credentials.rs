//! Credentials (`docs/api/credentials.md`): create, get, list, partial update and delete, the
//! authtoken shown once and working for agents, owners (`docs/accounts.md`) and ACL rules
//! (`docs/acl.md`) checked each with its field.

use crate::common::{BASE, TestApp};
use serde_json::json;
use tunnel_core::ids::{IdKind, SecretToken, make_id};
use tunnel_core::resources::credential::{Credential, CredentialList};

#[tokio::test]
async fn credential_create_get_list_update_delete() {
    let app = TestApp::new().await;
    let created: Credential = app
        .created("/credentials", json!({"description": "ci runner", "metadata": "{\"team\":1}", "acl": ["bind:*.example.com", "bind:env=prod"]}))
        .await;
    let id = created.id.clone();
    assert!(id.starts_with("cr_"), "{id}");
    assert_eq!(created.uri, format!("{BASE}/credentials/{id}"));
    assert_eq!(created.owner_id, app.admin_id);
    assert_eq!(created.acl, ["bind:*.example.com", "bind:env=prod"]);
    let token = created.token.clone().unwrap_or_default();
    let parsed = SecretToken::parse(&token).expect("token format");
    assert_eq!(parsed.lookup, tunnel_core::ids::suffix(&id));
    assert!(created.created_at.ends_with('Z'));
    // The token authenticates an agent (the agent channel's entry point), with the ACL.
    let auth = app
        .state
        .store
        .authenticate_authtoken(&token)
        .await
        .unwrap()
        .expect("authtoken works");
    assert_eq!(
        (auth.id.as_str(), auth.account_id.as_str()),
        (id.as_str(), app.account_id.as_str())
    );
    assert_eq!(auth.acl.len(), 2);
    let wrong = format!("{}_{}", parsed.lookup, "x".repeat(43));
    assert!(
        app.state
            .store
            .authenticate_authtoken(&wrong)
            .await
            .unwrap()
            .is_none()
    );

    let got: Credential = app.fetch(&format!("/credentials/{id}")).await;
    assert_eq!(got.token, None);
    assert_eq!(got.description, "ci runner");

    let list: CredentialList = app.fetch("/credentials").await;
    assert_eq!(list.uri, format!("{BASE}/credentials"));
    assert_eq!(list.next_page_uri, None);
    assert_eq!(list.credentials[0].id, id);
    assert_eq!(list.credentials[0].token, None);

    // Partial update: only the description changes.
    let patched: Credential = app
        .patched(
            &format!("/credentials/{id}"),
            json!({"description": "renamed"}),
        )
        .await;
    assert_eq!(patched.description, "renamed");
    assert_eq!(patched.metadata, "{\"team\":1}");
    assert_eq!(patched.acl, created.acl);
    assert_eq!(patched.token, None);
    // null means unchanged too; the path id in the body is accepted.
    let patched: Credential = app
        .patched(
            &format!("/credentials/{id}"),
            json!({"id": id, "description": null, "acl": ["*"]}),
        )
        .await;
    assert_eq!(patched.description, "renamed");
    assert_eq!(patched.acl, ["*"]);
    // Another id in the body is refused; owner_id is not an update parameter.
    app.patch(
        &format!("/credentials/{id}"),
        json!({"id": make_id(IdKind::Credential, 1, [1; 14])}),
    )
    .fails(&app, 400, "ERR_TUNNEL_114")
    .await;
    let r = app
        .patch(
            &format!("/credentials/{id}"),
            json!({"owner_id": app.user_id}),
        )
        .send(&app)
        .await;
    r.error_at(400, "ERR_TUNNEL_111", "owner_id");

    let deleted = app.delete(&format!("/credentials/{id}")).send(&app).await;
    assert_eq!(deleted.status, 204);
    assert!(deleted.text.is_empty());
    app.gone(&format!("/credentials/{id}")).await;
    app.delete(&format!("/credentials/{id}"))
        .fails(&app, 404, "ERR_TUNNEL_120")
        .await;
    assert!(
        app.state
            .store
            .authenticate_authtoken(&token)
            .await
            .unwrap()
            .is_none(),
        "deleted token still works"
    );
}

#[tokio::test]
async fn credential_create_tolerates_empty_values_and_missing_body() {
    let app = TestApp::new().await;
    let empty = json!({"description": "", "metadata": "", "acl": [], "owner_id": ""});
    let c: Credential = app.created("/credentials", empty).await;
    assert_eq!(c.owner_id, app.admin_id);
    assert!(c.acl.is_empty());
    // No body at all where every field is optional: read as {}.
    let r = app
        .call(axum::http::Method::POST, "/credentials")
        .send(&app)
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    assert!(r.body::<Credential>().token.is_some());
}

#[tokio::test]
async fn owner_id_rules() {
    let app = TestApp::new().await;
    // Admin may name another principal of the account.
    let c: Credential = app
        .created("/credentials", json!({"owner_id": app.user_id}))
        .await;
    assert_eq!(c.owner_id, app.user_id);
    // Anyone may name themselves.
    let r = app
        .post("/credentials", json!({"owner_id": app.user_id}))
        .key(&app.user_key)
        .send(&app)
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    // A non-admin naming someone else: 403.
    let r = app
        .post("/credentials", json!({"owner_id": app.admin_id}))
        .key(&app.user_key)
        .send(&app)
        .await;
    r.error_at(403, "ERR_TUNNEL_123", "owner_id");
    // Non-admin default owner is the caller.
    let r = app
        .post("/credentials", json!({}))
        .key(&app.user_key)
        .send(&app)
        .await;
    assert_eq!(r.body::<Credential>().owner_id, app.user_id);
    // An admin naming someone outside the account: 400.
    let other = app.principal(&app.other_account_id, false).await;
    let r = app
        .post("/credentials", json!({"owner_id": other.principal_id}))
        .send(&app)
        .await;
    r.error_at(400, "ERR_TUNNEL_124", "owner_id");
    // A bot of the account may own a credential.
    let bot = app.principal(&app.account_id, true).await;
    assert!(bot.principal_id.starts_with("bot_"));
    let c: Credential = app
        .created("/credentials", json!({"owner_id": bot.principal_id}))
        .await;
    assert_eq!(c.owner_id, bot.principal_id);
}

#[tokio::test]
async fn bad_acl_rules_are_reported_each_with_its_field() {
    let app = TestApp::new().await;
    let r = app
        .post("/credentials", json!({"acl": ["bind:ok.example.com", "allow:all", "bind:"], "description": "d".repeat(300)}))
        .send(&app)
        .await;
    let error = r.error(400, "ERR_TUNNEL_114");
    let fields: Vec<&str> = error
        .details
        .errors
        .iter()
        .map(|e| e.field.as_str())
        .collect();
    assert!(
        fields.contains(&"acl[1]") && fields.contains(&"acl[2]") && fields.contains(&"description"),
        "{fields:?}"
    );
    assert!(!fields.contains(&"acl[0]"));
    let r = app
        .post("/credentials", json!({"acl": ["nope"]}))
        .send(&app)
        .await;
    assert_eq!(r.field(), "acl[0]");
    // PATCH validates ACLs too.
    let c: Credential = app.created("/credentials", json!({})).await;
    let r = app
        .patch(&format!("/credentials/{}", c.id), json!({"acl": ["bind"]}))
        .send(&app)
        .await;
    r.error_at(400, "ERR_TUNNEL_114", "acl[0]");
    // One rule twice in two spellings: the second is named, with the first.
    let r = app
        .patch(
            &format!("/credentials/{}", c.id),
            json!({"acl": ["bind:a.example.com", "bind:A.example.com."]}),
        )
        .send(&app)
        .await;
    let error = r.error(400, "ERR_TUNNEL_114");
    assert_eq!(error.details.errors.len(), 1, "{error:?}");
    assert_eq!(error.details.errors[0].field, "acl[1]");
    assert!(
        error.details.errors[0]
            .message
            .contains("the same rule as `bind:a.example.com`"),
        "{error:?}"
    );
}
