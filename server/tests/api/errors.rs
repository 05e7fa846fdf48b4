//! Errors common to every operation (`docs/errors.md`): authentication, the version header,
//! bodies that are not JSON of the right shape or size or type, unknown routes and methods,
//! the messages naming unknown fields, and path ids that do not decode (the JSON error body,
//! not axum's text).

use crate::common::TestApp;
use serde_json::json;
use tunnel_core::ids::{IdKind, make_id};
use tunnel_core::resources::credential::Credential;

#[tokio::test]
async fn authentication_errors() {
    let app = TestApp::new().await;
    let missing = app
        .get("/credentials")
        .without("authorization")
        .fails(&app, 401, "ERR_TUNNEL_102")
        .await;
    // Every 401 says how to authenticate, as HTTP requires.
    assert_eq!(missing.headers["www-authenticate"], "Bearer");
    app.get("/credentials")
        .header("authorization", "Basic dXNlcjpwYXNz")
        .fails(&app, 401, "ERR_TUNNEL_103")
        .await;
    app.get("/credentials")
        .header("authorization", "Bearer")
        .fails(&app, 401, "ERR_TUNNEL_103")
        .await;
    let unknown = app
        .get("/credentials")
        .key("not-a-key-at-all-1234567")
        .fails(&app, 401, "ERR_TUNNEL_104")
        .await;
    assert_eq!(unknown.headers["www-authenticate"], "Bearer");
    // Right lookup, wrong secret.
    let lookup = app.admin_key.split('_').next().unwrap();
    app.get("/credentials")
        .key(&format!("{lookup}_{}", "A".repeat(43)))
        .fails(&app, 401, "ERR_TUNNEL_104")
        .await;
    // Authtokens are not API keys.
    let token = app
        .created::<Credential>("/credentials", json!({}))
        .await
        .token
        .unwrap();
    app.get("/credentials")
        .key(&token)
        .fails(&app, 401, "ERR_TUNNEL_104")
        .await;
    // `bearer` in any case works.
    let r = app
        .get("/credentials")
        .header("authorization", &format!("bearer {}", app.admin_key))
        .send(&app)
        .await;
    assert_eq!(r.status, 200);
    // Success responses carry an operation id too.
    assert!(
        r.headers
            .get("operation-id")
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with("op_")
    );
}

#[tokio::test]
async fn version_header_errors() {
    let app = TestApp::new().await;
    let r = app
        .get("/credentials")
        .without("service-version")
        .send(&app)
        .await;
    r.error(400, "ERR_TUNNEL_100");
    let r = app
        .get("/credentials")
        .header("service-version", "1")
        .send(&app)
        .await;
    let error = r.error(400, "ERR_TUNNEL_101");
    assert_eq!(error.details.extra["supported_version"], "2");
    assert!(error.msg.contains('2'));
    // The version is checked before the key.
    app.get("/credentials")
        .without("service-version")
        .without("authorization")
        .fails(&app, 400, "ERR_TUNNEL_100")
        .await;
    // The official clients' name for the header stands in for it, with the same checks, and
    // the message names the header sent.
    let r = app
        .get("/credentials")
        .without("service-version")
        .header("ngrok-version", "2")
        .send(&app)
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let error = app
        .get("/credentials")
        .without("service-version")
        .header("ngrok-version", "3")
        .send(&app)
        .await
        .error(400, "ERR_TUNNEL_101");
    assert!(error.msg.starts_with("Ngrok-Version `3`"), "{}", error.msg);
    // Both given: Service-Version is the one checked.
    app.get("/credentials")
        .header("ngrok-version", "2")
        .header("service-version", "3")
        .fails(&app, 400, "ERR_TUNNEL_101")
        .await;
}

#[tokio::test]
async fn body_errors() {
    let app = TestApp::new().await;
    let r = app
        .post("/credentials", json!(null))
        .raw("application/json", "{\"description\": ")
        .send(&app)
        .await;
    r.error(400, "ERR_TUNNEL_110");
    app.post("/credentials", json!(null))
        .raw("application/json", "[1,2]")
        .fails(&app, 400, "ERR_TUNNEL_110")
        .await;
    app.post("/credentials", json!(null))
        .raw("application/json", "{} {}")
        .fails(&app, 400, "ERR_TUNNEL_110")
        .await;
    let r = app
        .post("/credentials", json!({"descripton": "typo"}))
        .send(&app)
        .await;
    let error = r.error(400, "ERR_TUNNEL_111");
    assert_eq!(r.field(), "descripton");
    let accepted = error.details.extra["accepted_fields"].as_array().unwrap();
    assert!(
        accepted.contains(&json!("description")) && accepted.contains(&json!("owner_id")),
        "{}",
        r.text
    );
    let r = app
        .post("/credentials", json!({"acl": "bind:x"}))
        .send(&app)
        .await;
    r.error_at(400, "ERR_TUNNEL_110", "acl");
    // Content types.
    app.post("/credentials", json!(null))
        .raw("text/plain", "{}")
        .fails(&app, 415, "ERR_TUNNEL_113")
        .await;
    app.post("/credentials", json!(null))
        .raw("", "{}")
        .fails(&app, 415, "ERR_TUNNEL_113")
        .await;
    let r = app
        .post("/credentials", json!(null))
        .raw("application/json; charset=utf-8", "{}")
        .send(&app)
        .await;
    assert_eq!(r.status, 201);
    // Over 1 MiB: 413, whether or not Content-Length says so up front.
    let big = json!({"description": "x".repeat(1024 * 1024)});
    app.post("/credentials", big.clone())
        .fails(&app, 413, "ERR_TUNNEL_112")
        .await;
    // Just under the limit is parsed (and then fails validation, not the size check).
    let under = format!("{{\"metadata\": \"{}\"}}", "x".repeat(1024 * 1024 - 20));
    app.post("/credentials", json!(null))
        .raw("application/json", under)
        .fails(&app, 400, "ERR_TUNNEL_114")
        .await;
}

#[tokio::test]
async fn body_too_large_without_content_length() {
    use axum::body::Body;
    use axum::http::Request;
    use tower::ServiceExt as _;
    let app = TestApp::new().await;
    let chunks: Vec<Result<Vec<u8>, std::io::Error>> =
        (0..20).map(|_| Ok(vec![b' '; 64 * 1024])).collect();
    let body = Body::from_stream(futures_stream(chunks));
    let request = Request::post("/api/credentials")
        .header("authorization", format!("Bearer {}", app.admin_key))
        .header("service-version", "2")
        .header("content-type", "application/json")
        .body(body)
        .unwrap();
    let response = app.router.clone().oneshot(request).await.unwrap();
    assert_eq!(response.status(), 413);
}

fn futures_stream(
    items: Vec<Result<Vec<u8>, std::io::Error>>,
) -> impl futures_core::Stream<Item = Result<Vec<u8>, std::io::Error>> {
    struct Iter(std::vec::IntoIter<Result<Vec<u8>, std::io::Error>>);
    impl futures_core::Stream for Iter {
        type Item = Result<Vec<u8>, std::io::Error>;
        fn poll_next(
            mut self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<Option<Self::Item>> {
            std::task::Poll::Ready(self.0.next())
        }
    }
    Iter(items.into_iter())
}

#[tokio::test]
async fn unknown_routes_and_methods_get_json_errors() {
    let app = TestApp::new().await;
    let r = app.get("/nope").send(&app).await;
    r.error(404, "ERR_TUNNEL_130");
    app.get("/api/credentials/x/y/z")
        .fails(&app, 404, "ERR_TUNNEL_130")
        .await;
    app.call(axum::http::Method::PUT, "/credentials")
        .json(json!({}))
        .fails(&app, 405, "ERR_TUNNEL_131")
        .await;
    app.call(axum::http::Method::PATCH, "/edges/tls")
        .json(json!({}))
        .fails(&app, 405, "ERR_TUNNEL_131")
        .await;
    for root in ["/api", "/api/"] {
        let r = app.get(root).outside_api().send(&app).await;
        assert_eq!(
            r.error_body().error_code,
            "ERR_TUNNEL_130",
            "{root}: {}",
            r.text
        );
    }
    // Unknown API routes answer JSON even without credentials.
    app.get("/nothing/here")
        .without("authorization")
        .fails(&app, 404, "ERR_TUNNEL_130")
        .await;
}

#[tokio::test]
async fn command_style_bodies_and_unknown_field_messages() {
    let app = TestApp::new().await;
    let r = app
        .post("/credentials", json!({"descripton": "typo"}))
        .send(&app)
        .await;
    let msg = r.error_body().msg;
    assert!(
        msg.starts_with("Unknown field `descripton`; the accepted fields are `description`"),
        "{msg}"
    );
    assert_eq!(msg.matches("descripton").count(), 1, "{msg}");
}

/// An error quotes what the caller sent, but never at length: a huge unknown field, ACL rule,
/// label key or key type makes an answer of a few hundred bytes that still says what is wrong.
#[tokio::test]
async fn errors_echo_what_was_sent_only_shortened() {
    let app = TestApp::new().await;
    let huge = "y".repeat(100_000);
    let cases = [
        (
            "/credentials",
            json!({ huge.clone(): 1 }),
            "ERR_TUNNEL_111",
            "the accepted fields are",
        ),
        (
            "/credentials",
            json!({"acl": [huge.clone()]}),
            "ERR_TUNNEL_114",
            "is not a bind rule",
        ),
        (
            "/backends/tunnel_group",
            json!({"labels": { huge.clone(): "v" }}),
            "ERR_TUNNEL_114",
            "",
        ),
        (
            "/ssh_certificate_authorities",
            json!({"private_key_type": huge.clone()}),
            "ERR_TUNNEL_114",
            "is not a key type",
        ),
        // A value holding backticks, to trick the quoting: the whole message is bounded.
        (
            "/credentials",
            json!({"acl": [format!("a`{huge}")]}),
            "ERR_TUNNEL_114",
            "",
        ),
    ];
    for (path, body, code, says) in cases {
        let r = app.post(path, body).send(&app).await;
        r.error(400, code);
        assert!(r.text.len() < 4_000, "{path}: {} bytes", r.text.len());
        let error = r.error_body();
        assert!(error.msg.contains(says), "{path}: {}", error.msg);
        // Quoted in the message, or (a label key) in the field's name.
        assert!(r.text.contains(&"y".repeat(60)), "{path}: {}", r.text);
    }
}

/// A value quoted where the body's bounding does not reach (a detail, the field, a message
/// without backticks) is cut as it would cut it: 64 characters and `…`, so that a client sees
/// one rule whatever raised the error.
#[tokio::test]
async fn values_quoted_outside_backticks_are_cut_the_same_way() {
    let app = TestApp::new().await;
    let long = "q".repeat(100);
    let cut = format!("{}…", "q".repeat(64));
    let r = app.get(&format!("/credentials?{long}=1")).send(&app).await;
    r.error(400, "ERR_TUNNEL_115");
    assert_eq!(r.field(), cut);
    assert!(
        r.error_body().msg.contains(&format!("`{cut}`")),
        "{}",
        r.text
    );
    let r = app
        .post("/credentials", json!(null))
        .raw(&format!("text/{long}"), "{}")
        .send(&app)
        .await;
    assert_eq!(r.status, 415, "{}", r.text);
    assert!(
        r.error_body()
            .msg
            .contains(&format!("`text/{}…`", "q".repeat(59))),
        "{}",
        r.text
    );
    let r = app
        .get(&format!("/credentials?order={long}"))
        .send(&app)
        .await;
    r.error(400, "ERR_TUNNEL_116");
    assert!(
        r.error_body().msg.contains(&format!("`{cut}`")),
        "{}",
        r.text
    );
}

#[tokio::test]
async fn undecodable_path_ids_get_the_json_error_body() {
    let app = TestApp::new().await;
    for path in [
        "/credentials/%FF",
        "/ssh_certificate_authorities/%FF",
        "/tunnel_sessions/%FF",
        "/edges/tls/%FF",
        "/edges/tls/%FF/backend",
        "/backends/tunnel_group/%FF",
        "/event_destinations/%FF",
        "/event_subscriptions/%FF",
        "/event_subscriptions/%FF/sources/x",
    ] {
        let r = app.get(path).send(&app).await;
        r.error(400, "ERR_TUNNEL_114");
        assert_eq!(r.field(), "id", "{path}: {}", r.text);
        assert!(
            r.headers
                .get("content-type")
                .is_some_and(|v| v.to_str().unwrap().starts_with("application/json")),
            "{path}"
        );
    }
    let sub = make_id(IdKind::EventSubscription, 1, [1; 14]);
    let r = app
        .get(&format!("/event_subscriptions/{sub}/sources/%FF"))
        .send(&app)
        .await;
    r.error_at(400, "ERR_TUNNEL_114", "event_type");
    let r = app.delete("/credentials/%FF").send(&app).await;
    r.error(400, "ERR_TUNNEL_114");
}

/// NUL (`\u0000`, `%00`) is refused in every text the API stores or looks up, the same on every
/// database (PostgreSQL cannot store it; SQLite could): a 400 naming the field or parameter, a
/// 404 for a path id, never a 500 and never a row written.
#[tokio::test]
async fn the_nul_character_is_refused_in_bodies_queries_and_ids() {
    let app = TestApp::new().await;
    for (body, field) in [
        (json!({"description": "a\u{0}b"}), "description"),
        (json!({"metadata": "\u{0}"}), "metadata"),
        (
            json!({"acl": ["bind:a.example.com", "bind:\u{0}"]}),
            "acl[1]",
        ),
    ] {
        let r = app.post("/credentials", body).send(&app).await;
        r.error(400, "ERR_TUNNEL_114");
        assert_eq!(r.field(), field, "{}", r.text);
    }
    // Every text holding NUL is named, as validation names every problem: a label's key
    // (reported on its map, where the key itself cannot be shown) as well as values.
    let r = app
        .post(
            "/backends/tunnel_group",
            json!({"description": "\u{0}", "labels": {"k\u{0}": "v", "env": "a\u{0}"}}),
        )
        .send(&app)
        .await;
    let error = r.error(400, "ERR_TUNNEL_114");
    let mut fields: Vec<&str> = error
        .details
        .errors
        .iter()
        .map(|e| e.field.as_str())
        .collect();
    fields.sort_unstable();
    assert_eq!(
        fields,
        ["description", "labels", "labels.env"],
        "{}",
        r.text
    );
    assert!(
        error
            .details
            .errors
            .iter()
            .any(|e| e.message.starts_with("A key of `labels`")),
        "{}",
        r.text
    );
    let patched = app
        .created::<serde_json::Value>("/backends/tunnel_group", json!({}))
        .await;
    let r = app
        .patch(
            &format!("/backends/tunnel_group/{}", patched["id"].as_str().unwrap()),
            json!({"labels": {"a\u{0}b": "c"}}),
        )
        .send(&app)
        .await;
    r.error_at(400, "ERR_TUNNEL_114", "labels");
    // A backslash followed by `u0000` is text, not NUL.
    let kept: Credential = app
        .created("/credentials", json!({"description": "a\\u0000b"}))
        .await;
    assert_eq!(kept.description, "a\\u0000b");
    let created: Credential = app.created("/credentials", json!({})).await;
    let r = app
        .patch(
            &format!("/credentials/{}", created.id),
            json!({"description": "x\u{0}"}),
        )
        .send(&app)
        .await;
    r.error(400, "ERR_TUNNEL_114");
    for path in [
        "/credentials/%00",
        "/credentials/cr_%00",
        "/event_destinations/%00",
    ] {
        app.get(path).send(&app).await.error(404, "ERR_TUNNEL_120");
    }
    for (path, field) in [
        ("/events?type=%00", "type"),
        ("/events?object_id=a%00", "object_id"),
        ("/credentials?before_id=%00", "before_id"),
        // Not NUL, but no text either: bytes that are not UTF-8.
        ("/credentials?q=%FF", "q"),
        ("/events?type=a%C3", "type"),
        // Nor twice: the second would silently win.
        ("/credentials?limit=1&limit=2", "limit"),
        (
            "/events?type=credential_created.v0&type=credential_deleted.v0",
            "type",
        ),
    ] {
        let r = app.get(path).send(&app).await;
        r.error(400, "ERR_TUNNEL_116");
        assert_eq!(r.field(), field, "{path}: {}", r.text);
    }
    let all: tunnel_core::resources::credential::CredentialList = app.fetch("/credentials").await;
    assert_eq!(all.credentials.len(), 2, "nothing else was written");
}
