//! Users and bots (`docs/api/users.md`): every principal of the account lists and reads them
//! all, with their names, users before bots, paged and searched like every list; another
//! account's are not found; `/me` names the caller.

use crate::common::TestApp;
use tunnel_core::resources::api_key::Me;
use tunnel_core::resources::user::{User, UserList};

#[tokio::test]
async fn the_accounts_users_and_bots_are_listed_by_name_and_paged() {
    let app = TestApp::new().await;
    let bot = app.principal(&app.account_id, true).await;
    let list: UserList = app.fetch("/users").await;
    let shown: Vec<(&str, &str, &str, bool)> = list
        .users
        .iter()
        .map(|u| (u.id.as_str(), u.name.as_str(), u.kind.as_str(), u.is_admin))
        .collect();
    // Users newest first, then the bot; not the other account's admin.
    assert_eq!(
        shown,
        [
            (app.user_id.as_str(), "Mo Member", "user", false),
            (app.admin_id.as_str(), "Ada Admin", "user", true),
            (bot.principal_id.as_str(), "", "bot", false),
        ]
    );
    let first = &list.users[0];
    assert!(first.uri.ends_with(&format!("/api/users/{}", first.id)));
    assert_eq!(list.next_page_uri, None);

    // One at a time: the link after a user names it, the one after the last user leads to the
    // bot (a `bot_` id is a valid `before_id` of this list).
    let mut seen = Vec::new();
    let mut next = Some("/users?limit=1".to_owned());
    while let Some(path) = next {
        let page: UserList = app.fetch(&path).await;
        assert!(page.users.len() <= 1);
        seen.extend(page.users.into_iter().map(|u| u.id));
        next = page
            .next_page_uri
            .map(|uri| uri[uri.find("/users").unwrap()..].to_owned());
        assert!(seen.len() <= 3, "the pages do not end");
    }
    assert_eq!(
        seen,
        [app.user_id.clone(), app.admin_id.clone(), bot.principal_id]
    );

    // A member sees the same list.
    let as_member: UserList = app.get("/users").key(&app.user_key).send(&app).await.body();
    assert_eq!(as_member, list);
}

#[tokio::test]
async fn users_are_searched_by_name_and_id() {
    let app = TestApp::new().await;
    let ids = |list: UserList| -> Vec<String> { list.users.into_iter().map(|u| u.id).collect() };
    // A trigram search, case-insensitive, and a two-character one (with a hyphen, which no id
    // and no other name holds, so no random id can match it too).
    let jo = app
        .state
        .store
        .create_principal(
            &app.account_id,
            &tunnel_server::store::Principal {
                kind: tunnel_core::ids::IdKind::User,
                name: "Jo-Jo",
                admin: false,
            },
        )
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        ids(app.fetch("/users?q=ADA%20ad").await),
        [app.admin_id.as_str()]
    );
    assert_eq!(
        ids(app.fetch("/users?q=O-").await),
        [jo.principal_id.as_str()]
    );
    let suffix = &app.admin_id[app.admin_id.len() - 8..];
    assert_eq!(
        ids(app.fetch(&format!("/users?q={suffix}")).await),
        [app.admin_id.as_str()]
    );
    // The other account's admin is not found by its name.
    assert!(ids(app.fetch("/users?q=otto%20o").await).is_empty());
}

#[tokio::test]
async fn a_user_is_read_and_another_accounts_is_not_found() {
    let app = TestApp::new().await;
    let got: User = app.fetch(&format!("/users/{}", app.user_id)).await;
    assert_eq!(
        (got.name.as_str(), got.kind.as_str(), got.is_admin),
        ("Mo Member", "user", false)
    );
    let bot = app.principal(&app.account_id, true).await;
    let got: User = app.fetch(&format!("/users/{}", bot.principal_id)).await;
    assert_eq!(got.kind, "bot");

    let other: Me = app.get("/me").key(&app.other_key).send(&app).await.body();
    app.get(&format!("/users/{}", other.principal_id))
        .send(&app)
        .await
        .error(404, "ERR_TUNNEL_120");
    // A `before_id` of another kind is refused.
    app.get("/users?before_id=cr_1")
        .send(&app)
        .await
        .error_at(400, "ERR_TUNNEL_116", "before_id");
}

#[tokio::test]
async fn me_names_the_caller() {
    let app = TestApp::new().await;
    let me: Me = app.fetch("/me").await;
    assert_eq!(
        (me.principal_name.as_str(), me.principal_kind.as_str()),
        ("Ada Admin", "user")
    );
    let bot = app.principal(&app.account_id, true).await;
    let me: Me = app.get("/me").key(&bot.api_key).send(&app).await.body();
    assert_eq!(
        (me.principal_name.as_str(), me.principal_kind.as_str()),
        ("", "bot")
    );
}
