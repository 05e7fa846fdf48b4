//! In-process tests of the API on the router against in-memory SQLite: every operation's
//! success path, each class of error, pagination, partial updates and tolerance rules.

mod common;

use common::{BASE, TestApp};
use serde_json::{Value, json};
use std::collections::HashSet;
use tunnel_core::ids::{IdKind, SecretToken, make_id};

fn s(v: &Value) -> &str {
    v.as_str().unwrap_or_default()
}

// ---------------------------------------------------------------- credentials

#[tokio::test]
async fn credential_create_get_list_update_delete() {
    let app = TestApp::new().await;
    let created = app
        .create("/credentials", json!({"description": "ci runner", "metadata": "{\"team\":1}", "acl": ["bind:*.example.com", "bind:env=prod"]}))
        .await;
    let id = s(&created["id"]).to_owned();
    assert!(id.starts_with("cr_"), "{id}");
    assert_eq!(created["uri"], format!("{BASE}/credentials/{id}"));
    assert_eq!(created["owner_id"], app.admin_id);
    assert_eq!(
        created["acl"],
        json!(["bind:*.example.com", "bind:env=prod"])
    );
    let token = s(&created["token"]).to_owned();
    let parsed = SecretToken::parse(&token).expect("token format");
    assert_eq!(parsed.lookup, tunnel_core::ids::suffix(&id));
    assert!(created["created_at"].as_str().unwrap().ends_with('Z'));
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

    let got = app.get(&format!("/credentials/{id}")).send(&app).await;
    assert_eq!(got.status, 200);
    assert_eq!(got.json["token"], Value::Null);
    assert_eq!(got.json["description"], "ci runner");

    let list = app.get("/credentials").send(&app).await;
    assert_eq!(list.status, 200);
    assert_eq!(list.json["uri"], format!("{BASE}/credentials"));
    assert_eq!(list.json["next_page_uri"], Value::Null);
    assert_eq!(list.json["credentials"][0]["id"], id.as_str());
    assert_eq!(list.json["credentials"][0]["token"], Value::Null);

    // Partial update: only the description changes.
    let patched = app
        .patch(
            &format!("/credentials/{id}"),
            json!({"description": "renamed"}),
        )
        .send(&app)
        .await;
    assert_eq!(patched.status, 200, "{}", patched.text);
    assert_eq!(patched.json["description"], "renamed");
    assert_eq!(patched.json["metadata"], "{\"team\":1}");
    assert_eq!(patched.json["acl"], created["acl"]);
    assert_eq!(patched.json["token"], Value::Null);
    // null means unchanged too; the path id in the body is accepted.
    let patched = app
        .patch(
            &format!("/credentials/{id}"),
            json!({"id": id, "description": null, "acl": ["*"]}),
        )
        .send(&app)
        .await;
    assert_eq!(patched.status, 200, "{}", patched.text);
    assert_eq!(patched.json["description"], "renamed");
    assert_eq!(patched.json["acl"], json!(["*"]));
    // Another id in the body is refused; owner_id is not an update parameter.
    app.patch(
        &format!("/credentials/{id}"),
        json!({"id": make_id(IdKind::Credential, 1, [1; 14])}),
    )
    .send(&app)
    .await
    .error(400, "ERR_TUNNEL_114");
    let r = app
        .patch(
            &format!("/credentials/{id}"),
            json!({"owner_id": app.user_id}),
        )
        .send(&app)
        .await;
    r.error(400, "ERR_TUNNEL_111");
    assert_eq!(r.field(), "owner_id");

    let deleted = app.delete(&format!("/credentials/{id}")).send(&app).await;
    assert_eq!(deleted.status, 204);
    assert!(deleted.text.is_empty());
    app.get(&format!("/credentials/{id}"))
        .send(&app)
        .await
        .error(404, "ERR_TUNNEL_120");
    app.delete(&format!("/credentials/{id}"))
        .send(&app)
        .await
        .error(404, "ERR_TUNNEL_120");
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
    let c = app
        .create(
            "/credentials",
            json!({"description": "", "metadata": "", "acl": [], "owner_id": ""}),
        )
        .await;
    assert_eq!(c["owner_id"], app.admin_id);
    assert_eq!(c["acl"], json!([]));
    // No body at all where every field is optional: read as {}.
    let r = app
        .call(axum::http::Method::POST, "/credentials")
        .send(&app)
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    assert!(r.json["token"].is_string());
}

#[tokio::test]
async fn owner_id_rules() {
    let app = TestApp::new().await;
    // Admin may name another principal of the account.
    let c = app
        .create("/credentials", json!({"owner_id": app.user_id}))
        .await;
    assert_eq!(c["owner_id"], app.user_id);
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
    r.error(403, "ERR_TUNNEL_123");
    assert_eq!(r.field(), "owner_id");
    // Non-admin default owner is the caller.
    let r = app
        .post("/credentials", json!({}))
        .key(&app.user_key)
        .send(&app)
        .await;
    assert_eq!(r.json["owner_id"], app.user_id);
    // An admin naming someone outside the account: 400.
    let other = app
        .state
        .store
        .create_principal(&app.other_account_id, false, false)
        .await
        .unwrap()
        .unwrap();
    let r = app
        .post("/credentials", json!({"owner_id": other.principal_id}))
        .send(&app)
        .await;
    r.error(400, "ERR_TUNNEL_124");
    assert_eq!(r.field(), "owner_id");
    // A bot of the account may own a credential.
    let bot = app
        .state
        .store
        .create_principal(&app.account_id, false, true)
        .await
        .unwrap()
        .unwrap();
    assert!(bot.principal_id.starts_with("bot_"));
    let c = app
        .create("/credentials", json!({"owner_id": bot.principal_id}))
        .await;
    assert_eq!(c["owner_id"], bot.principal_id);
}

// ---------------------------------------------------------------- SSH certificate authorities

fn ssh_keygen_fingerprint(public_line: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ca.pub");
    std::fs::write(&path, format!("{public_line}\n")).unwrap();
    let out = std::process::Command::new("ssh-keygen")
        .arg("-l")
        .arg("-f")
        .arg(&path)
        .output()
        .expect("ssh-keygen runs");
    assert!(
        out.status.success(),
        "ssh-keygen refused {public_line}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[tokio::test]
async fn ssh_ca_key_types_are_real_keys() {
    let app = TestApp::new().await;
    let cases = [
        (json!({}), "ed25519", "ssh-ed25519", "256"),
        (
            json!({"private_key_type": "ed25519"}),
            "ed25519",
            "ssh-ed25519",
            "256",
        ),
        (
            json!({"private_key_type": "ecdsa"}),
            "ecdsa",
            "ecdsa-sha2-nistp256",
            "256",
        ),
        (
            json!({"private_key_type": "ecdsa", "elliptic_curve": "p384"}),
            "ecdsa",
            "ecdsa-sha2-nistp384",
            "384",
        ),
        (
            json!({"private_key_type": "ecdsa", "elliptic_curve": "p521"}),
            "ecdsa",
            "ecdsa-sha2-nistp521",
            "521",
        ),
        (
            json!({"private_key_type": "rsa", "key_size": 2048}),
            "rsa",
            "ssh-rsa",
            "2048",
        ),
    ];
    for (body, key_type, algorithm, bits) in cases {
        let ca = app
            .create("/ssh_certificate_authorities", body.clone())
            .await;
        let id = s(&ca["id"]).to_owned();
        assert!(id.starts_with("sshca_"));
        assert_eq!(ca["key_type"], key_type, "{body}");
        let public = s(&ca["public_key"]).to_owned();
        let parts: Vec<&str> = public.split(' ').collect();
        assert_eq!(parts.len(), 2, "one line `<algorithm> <base64>`: {public}");
        assert_eq!(parts[0], algorithm);
        assert!(!public.contains('\n'));
        let fingerprint = ssh_keygen_fingerprint(&public);
        assert!(
            fingerprint.starts_with(&format!("{bits} SHA256:")),
            "{fingerprint}"
        );
        assert!(ca.get("private_key").is_none());
        // The sealed private key opens with the server key and matches the public key.
        let sealed = app
            .state
            .store
            .ssh_ca_sealed_key(&app.account_id, &id)
            .await
            .unwrap()
            .unwrap();
        let private = app.state.keys.open(&sealed, &id).unwrap();
        let private = ssh_key::PrivateKey::from_openssh(&private).unwrap();
        assert_eq!(
            private.public_key().key_data(),
            ssh_key::PublicKey::from_openssh(&public)
                .unwrap()
                .key_data()
        );
        assert!(!String::from_utf8_lossy(&sealed).contains("PRIVATE KEY"));
    }
}

#[tokio::test]
async fn ssh_ca_rsa_4096_is_generated_off_the_runtime() {
    let app = TestApp::new().await;
    // While the key is generated on the blocking pool, the (single-threaded test) runtime still
    // answers other requests.
    let slow = {
        let app = app.clone();
        tokio::spawn(async move {
            app.post(
                "/ssh_certificate_authorities",
                json!({"private_key_type": "rsa"}),
            )
            .send(&app)
            .await
        })
    };
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    let quick = app.get("/credentials").send(&app).await;
    assert_eq!(quick.status, 200);
    let ca = slow.await.unwrap();
    assert_eq!(ca.status, 201, "{}", ca.text);
    assert_eq!(ca.json["key_type"], "rsa");
    assert!(ssh_keygen_fingerprint(s(&ca.json["public_key"])).starts_with("4096 SHA256:"));
}

#[tokio::test]
async fn ssh_ca_get_list_update_delete() {
    let app = TestApp::new().await;
    let ca = app
        .create(
            "/ssh_certificate_authorities",
            json!({"description": "hosts", "metadata": "m"}),
        )
        .await;
    let id = s(&ca["id"]);
    let uri = format!("/ssh_certificate_authorities/{id}");
    assert_eq!(app.get(&uri).send(&app).await.json, ca);
    let list = app.get("/ssh_certificate_authorities").send(&app).await;
    assert_eq!(list.json["ssh_certificate_authorities"][0], ca);
    assert_eq!(
        list.json["uri"],
        format!("{BASE}/ssh_certificate_authorities")
    );
    let r = app.patch(&uri, json!({"metadata": "new"})).send(&app).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json["metadata"], "new");
    assert_eq!(r.json["description"], "hosts");
    assert_eq!(r.json["public_key"], ca["public_key"]);
    app.patch(&uri, json!({"key_type": "rsa"}))
        .send(&app)
        .await
        .error(400, "ERR_TUNNEL_111");
    assert_eq!(app.delete(&uri).send(&app).await.status, 204);
    app.get(&uri).send(&app).await.error(404, "ERR_TUNNEL_120");
}

#[tokio::test]
async fn ssh_ca_bad_key_parameters() {
    let app = TestApp::new().await;
    let cases = [
        (json!({"private_key_type": "dsa"}), "private_key_type"),
        (
            json!({"private_key_type": "rsa", "key_size": 1024}),
            "key_size",
        ),
        (
            json!({"private_key_type": "rsa", "key_size": 4097}),
            "key_size",
        ),
        (
            json!({"private_key_type": "ecdsa", "elliptic_curve": "p224"}),
            "elliptic_curve",
        ),
        (
            json!({"private_key_type": "ed25519", "elliptic_curve": "p256"}),
            "elliptic_curve",
        ),
        (
            json!({"private_key_type": "ed25519", "key_size": 2048}),
            "key_size",
        ),
    ];
    for (body, field) in cases {
        let r = app
            .post("/ssh_certificate_authorities", body.clone())
            .send(&app)
            .await;
        r.error(400, "ERR_TUNNEL_114");
        assert_eq!(r.field(), field, "{body}");
    }
    let r = app
        .post(
            "/ssh_certificate_authorities",
            json!({"private_key_type": "rsa", "key_size": "big"}),
        )
        .send(&app)
        .await;
    r.error(400, "ERR_TUNNEL_110");
    assert_eq!(r.field(), "key_size");
    assert_eq!(
        app.get("/ssh_certificate_authorities")
            .send(&app)
            .await
            .json["ssh_certificate_authorities"],
        json!([])
    );
}

// ---------------------------------------------------------------- limits

#[tokio::test]
async fn limits_at_their_bound_and_one_past_in_bytes() {
    let app = TestApp::new().await;
    for path in ["/credentials", "/ssh_certificate_authorities"] {
        for (field, max) in [("description", 255usize), ("metadata", 4096)] {
            let ok = app
                .post(path, json!({field: "a".repeat(max)}))
                .send(&app)
                .await;
            assert_eq!(ok.status, 201, "{path} {field} at {max} bytes: {}", ok.text);
            assert_eq!(ok.json[field].as_str().unwrap().len(), max);
            let r = app
                .post(path, json!({field: "a".repeat(max + 1)}))
                .send(&app)
                .await;
            r.error(400, "ERR_TUNNEL_114");
            assert_eq!(r.field(), field);
            assert!(s(&r.json["msg"]).contains("bytes"), "{}", r.text);
            // Counted in bytes: two-byte characters reach the bound at half the count.
            let r = app
                .post(path, json!({field: "é".repeat(max / 2 + 1)}))
                .send(&app)
                .await;
            r.error(400, "ERR_TUNNEL_114");
            // And in PATCH too.
            let id = s(&ok.json["id"]).to_owned();
            let r = app
                .patch(&format!("{path}/{id}"), json!({field: "a".repeat(max + 1)}))
                .send(&app)
                .await;
            r.error(400, "ERR_TUNNEL_114");
            assert_eq!(r.field(), field);
        }
    }
}

async fn destination(app: &TestApp) -> String {
    let d = app
        .create("/event_destinations", json!({"description": "hook", "target": {"webhook": {"url": "https://example.com/hook"}}}))
        .await;
    s(&d["id"]).to_owned()
}

#[tokio::test]
async fn limits_at_their_bound_and_one_past_in_characters() {
    let app = TestApp::new().await;
    let sources = json!([{"type": "ip_policy_created.v0"}]);
    for (field, max, ch) in [("description", 255usize, "é"), ("metadata", 4096, "😀")] {
        let ok = app
            .post(
                "/event_subscriptions",
                json!({field: ch.repeat(max), "sources": sources}),
            )
            .send(&app)
            .await;
        assert_eq!(ok.status, 201, "{field} at {max} characters: {}", ok.text);
        assert_eq!(ok.json[field].as_str().unwrap().chars().count(), max);
        let r = app
            .post(
                "/event_subscriptions",
                json!({field: ch.repeat(max + 1), "sources": sources}),
            )
            .send(&app)
            .await;
        r.error(400, "ERR_TUNNEL_114");
        assert_eq!(r.field(), field);
        assert!(s(&r.json["msg"]).contains("characters"), "{}", r.text);
        let id = s(&ok.json["id"]).to_owned();
        let r = app
            .patch(
                &format!("/event_subscriptions/{id}"),
                json!({field: ch.repeat(max + 1)}),
            )
            .send(&app)
            .await;
        r.error(400, "ERR_TUNNEL_114");
    }
}

// ---------------------------------------------------------------- validation

#[tokio::test]
async fn bad_acl_rules_are_reported_each_with_its_field() {
    let app = TestApp::new().await;
    let r = app
        .post("/credentials", json!({"acl": ["bind:ok.example.com", "allow:all", "bind:"], "description": "d".repeat(300)}))
        .send(&app)
        .await;
    r.error(400, "ERR_TUNNEL_114");
    let fields: Vec<&str> = r.json["details"]["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| s(&e["field"]))
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
    let c = app.create("/credentials", json!({})).await;
    let r = app
        .patch(
            &format!("/credentials/{}", s(&c["id"])),
            json!({"acl": ["bind"]}),
        )
        .send(&app)
        .await;
    r.error(400, "ERR_TUNNEL_114");
    assert_eq!(r.field(), "acl[0]");
}

#[tokio::test]
async fn unknown_event_type_and_bad_destinations() {
    let app = TestApp::new().await;
    let r = app
        .post(
            "/event_subscriptions",
            json!({"sources": [{"type": "made_up.v0"}]}),
        )
        .send(&app)
        .await;
    r.error(400, "ERR_TUNNEL_114");
    assert_eq!(r.field(), "sources[0].type");
    let r = app
        .post(
            "/event_subscriptions",
            json!({"sources": [{"type": "no version"}]}),
        )
        .send(&app)
        .await;
    assert_eq!(r.field(), "sources[0].type");
    let r = app.post("/event_subscriptions", json!({})).send(&app).await;
    r.error(400, "ERR_TUNNEL_114");
    assert_eq!(r.field(), "sources");
    // A well-formed destination id that does not exist in the account: 400 naming it.
    let missing = make_id(IdKind::EventDestination, 5, [5; 14]);
    let r = app
        .post(
            "/event_subscriptions",
            json!({"sources": [{"type": "ip_policy_created.v0"}], "destination_ids": [missing]}),
        )
        .send(&app)
        .await;
    r.error(400, "ERR_TUNNEL_121");
    assert_eq!(r.field(), "destination_ids[0]");
    // Another account's destination is as good as missing.
    let theirs = app
        .post(
            "/event_destinations",
            json!({"target": {"webhook": {"url": "https://other.example/h"}}}),
        )
        .key(&app.other_key)
        .send(&app)
        .await;
    let r = app
        .post("/event_subscriptions", json!({"sources": [{"type": "ip_policy_created.v0"}], "destination_ids": [theirs.json["id"]]}))
        .send(&app)
        .await;
    r.error(400, "ERR_TUNNEL_121");
    let r = app
        .post(
            "/event_subscriptions",
            json!({"sources": [{"type": "ip_policy_created.v0", "extra": 1}]}),
        )
        .send(&app)
        .await;
    r.error(400, "ERR_TUNNEL_111");
    assert_eq!(r.field(), "sources[0].extra");
}

// ---------------------------------------------------------------- event subscriptions & destinations

#[tokio::test]
async fn event_subscription_crud_and_partial_updates() {
    let app = TestApp::new().await;
    let d1 = destination(&app).await;
    let d2 = destination(&app).await;
    let sub = app
        .create(
            "/event_subscriptions",
            json!({"description": "audit", "metadata": "x", "sources": [{"type": "ip_policy_created.v0"}, {"type": "credential_created.v0"}], "destination_ids": [d1]}),
        )
        .await;
    let id = s(&sub["id"]).to_owned();
    assert!(id.starts_with("esb_"));
    assert_eq!(sub["uri"], format!("{BASE}/event_subscriptions/{id}"));
    assert_eq!(
        sub["sources"],
        json!([
            {"type": "ip_policy_created.v0", "uri": format!("{BASE}/event_subscriptions/{id}/sources/ip_policy_created.v0")},
            {"type": "credential_created.v0", "uri": format!("{BASE}/event_subscriptions/{id}/sources/credential_created.v0")},
        ])
    );
    assert_eq!(
        sub["destinations"],
        json!([{"id": d1, "uri": format!("{BASE}/event_destinations/{d1}")}])
    );

    // Each source uri answers.
    let src = app.get(s(&sub["sources"][0]["uri"])).send(&app).await;
    assert_eq!(src.status, 200);
    assert_eq!(src.json, sub["sources"][0]);
    app.get(&format!(
        "/event_subscriptions/{id}/sources/tls_edge_created.v0"
    ))
    .send(&app)
    .await
    .error(404, "ERR_TUNNEL_120");

    let path = format!("/event_subscriptions/{id}");
    let r = app
        .patch(&path, json!({"description": "only this"}))
        .send(&app)
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.json["description"], "only this");
    assert_eq!(r.json["metadata"], "x");
    assert_eq!(r.json["sources"], sub["sources"]);
    assert_eq!(r.json["destinations"], sub["destinations"]);
    let r = app
        .patch(
            &path,
            json!({"sources": [{"type": "tls_edge_created.v0"}], "destination_ids": [d2, d1]}),
        )
        .send(&app)
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.json["sources"][0]["type"], "tls_edge_created.v0");
    assert_eq!(r.json["destinations"][0]["id"], d2.as_str());
    assert_eq!(r.json["destinations"][1]["id"], d1.as_str());
    assert_eq!(r.json["description"], "only this");
    assert_eq!(app.get(&path).send(&app).await.json, r.json);
    let list = app.get("/event_subscriptions").send(&app).await;
    assert_eq!(list.json["event_subscriptions"][0], r.json);

    // A destination in use cannot be deleted.
    app.delete(&format!("/event_destinations/{d1}"))
        .send(&app)
        .await
        .error(409, "ERR_TUNNEL_122");
    let r = app
        .patch(&path, json!({"destination_ids": []}))
        .send(&app)
        .await;
    assert_eq!(r.json["destinations"], json!([]));
    assert_eq!(
        app.delete(&format!("/event_destinations/{d1}"))
            .send(&app)
            .await
            .status,
        204
    );
    assert_eq!(app.delete(&path).send(&app).await.status, 204);
    app.get(&path).send(&app).await.error(404, "ERR_TUNNEL_120");
    assert_eq!(
        app.delete(&format!("/event_destinations/{d2}"))
            .send(&app)
            .await
            .status,
        204
    );
}

#[tokio::test]
async fn event_destinations_minimal_endpoints() {
    let app = TestApp::new().await;
    let d = app
        .create(
            "/event_destinations",
            json!({"target": {"webhook": {"url": "https://example.com/h"}}}),
        )
        .await;
    assert_eq!(d["format"], "json");
    assert!(s(&d["id"]).starts_with("ed_"));
    assert_eq!(app.get(s(&d["uri"])).send(&app).await.json, d);
    assert_eq!(
        app.get("/event_destinations").send(&app).await.json["event_destinations"][0],
        d
    );
    let r = app
        .post(
            "/event_destinations",
            json!({"target": {"webhook": {"url": "ftp://x"}}}),
        )
        .send(&app)
        .await;
    r.error(400, "ERR_TUNNEL_114");
    assert_eq!(r.field(), "target.webhook.url");
    let r = app
        .post(
            "/event_destinations",
            json!({"format": "xml", "target": {}}),
        )
        .send(&app)
        .await;
    r.error(400, "ERR_TUNNEL_114");
}

// ---------------------------------------------------------------- TLS edges, backends

#[tokio::test]
async fn tls_edge_backend_module() {
    let app = TestApp::new().await;
    let backend = app
        .create("/backends/tunnel_group", json!({"labels": {"env": "prod"}}))
        .await;
    let bid = s(&backend["id"]).to_owned();
    assert!(bid.starts_with("bkdtg_"));
    assert_eq!(
        backend["uri"],
        format!("{BASE}/backends/tunnel_group/{bid}")
    );
    let edge = app
        .create("/edges/tls", json!({"hostports": ["app.example.com:443"]}))
        .await;
    let eid = s(&edge["id"]).to_owned();
    assert!(eid.starts_with("edgtls_"));
    assert_eq!(edge["backend"], Value::Null);
    let module_path = format!("/edges/tls/{eid}/backend");
    app.get(&module_path)
        .send(&app)
        .await
        .error(404, "ERR_TUNNEL_120");

    let r = app
        .put(&module_path, json!({"backend_id": bid}))
        .send(&app)
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        r.json,
        json!({"enabled": true, "backend": {"id": bid, "uri": format!("{BASE}/backends/tunnel_group/{bid}")}})
    );
    assert_eq!(app.get(&module_path).send(&app).await.json, r.json);
    assert_eq!(
        app.get(&format!("/edges/tls/{eid}")).send(&app).await.json["backend"],
        r.json
    );
    let r = app
        .put(&module_path, json!({"backend_id": bid, "enabled": false}))
        .send(&app)
        .await;
    assert_eq!(r.json["enabled"], false);
    let r = app
        .put(&module_path, json!({"backend_id": bid, "enabled": null}))
        .send(&app)
        .await;
    assert_eq!(r.json["enabled"], true);

    // Errors: backend in use, missing backend, wrong kind, unknown edge.
    app.delete(&format!("/backends/tunnel_group/{bid}"))
        .send(&app)
        .await
        .error(409, "ERR_TUNNEL_122");
    let r = app
        .put(
            &module_path,
            json!({"backend_id": make_id(IdKind::TunnelGroupBackend, 1, [1; 14])}),
        )
        .send(&app)
        .await;
    r.error(400, "ERR_TUNNEL_121");
    assert_eq!(r.field(), "backend_id");
    let r = app
        .put(&module_path, json!({"backend_id": "ed_x"}))
        .send(&app)
        .await;
    r.error(400, "ERR_TUNNEL_114");
    let r = app.put(&module_path, json!({})).send(&app).await;
    assert_eq!(r.field(), "backend_id");
    let unknown_edge = make_id(IdKind::TlsEdge, 1, [1; 14]);
    app.put(
        &format!("/edges/tls/{unknown_edge}/backend"),
        json!({"backend_id": bid}),
    )
    .send(&app)
    .await
    .error(404, "ERR_TUNNEL_120");

    assert_eq!(app.delete(&module_path).send(&app).await.status, 204);
    app.get(&module_path)
        .send(&app)
        .await
        .error(404, "ERR_TUNNEL_120");
    app.delete(&module_path)
        .send(&app)
        .await
        .error(404, "ERR_TUNNEL_120");
    assert_eq!(
        app.delete(&format!("/backends/tunnel_group/{bid}"))
            .send(&app)
            .await
            .status,
        204
    );
    assert_eq!(
        app.get("/edges/tls").send(&app).await.json["tls_edges"][0]["id"],
        eid.as_str()
    );
    assert_eq!(
        app.delete(&format!("/edges/tls/{eid}"))
            .send(&app)
            .await
            .status,
        204
    );
    app.get(&format!("/edges/tls/{eid}"))
        .send(&app)
        .await
        .error(404, "ERR_TUNNEL_120");
    let r = app
        .post("/edges/tls", json!({"hostports": ["nope"]}))
        .send(&app)
        .await;
    assert_eq!(r.field(), "hostports[0]");
}

// ---------------------------------------------------------------- tunnel sessions

fn session(
    app: &TestApp,
    n: u64,
    account: &str,
    credential: &str,
) -> tunnel_server::agents::LiveSession {
    use tunnel_core::resources::Ref;
    use tunnel_core::resources::tunnel_session::TunnelSession;
    let id = make_id(IdKind::TunnelSession, 1_700_000_000_000 + n, [n as u8; 14]);
    tunnel_server::agents::LiveSession {
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
        },
        account_id: account.into(),
        credential_id: credential.into(),
    }
}

#[tokio::test]
async fn tunnel_sessions_list_get_and_close_on_credential_delete() {
    let app = TestApp::new().await;
    let cred = app.create("/credentials", json!({})).await;
    let cid = s(&cred["id"]).to_owned();
    for n in 0..5 {
        app.state
            .registry
            .insert(session(&app, n, &app.account_id, &cid));
    }
    let foreign = session(&app, 9, &app.other_account_id, "cr_other");
    app.state.registry.insert(foreign.clone());

    let page1 = app.get("/tunnel_sessions?limit=3").send(&app).await;
    assert_eq!(page1.status, 200, "{}", page1.text);
    let items = page1.json["tunnel_sessions"].as_array().unwrap();
    assert_eq!(items.len(), 3);
    assert!(s(&items[0]["id"]) > s(&items[1]["id"]));
    let next = s(&page1.json["next_page_uri"]).to_owned();
    assert_eq!(
        next,
        format!(
            "{BASE}/tunnel_sessions?limit=3&before_id={}",
            s(&items[2]["id"])
        )
    );
    let page2 = app.get(&next).send(&app).await;
    assert_eq!(page2.json["tunnel_sessions"].as_array().unwrap().len(), 2);
    assert_eq!(page2.json["next_page_uri"], Value::Null);

    let one = app.get(s(&items[0]["uri"])).send(&app).await;
    assert_eq!(one.status, 200);
    assert_eq!(one.json, items[0]);
    app.get(&format!("/tunnel_sessions/{}", foreign.session.id))
        .send(&app)
        .await
        .error(404, "ERR_TUNNEL_120");

    assert_eq!(
        app.delete(&format!("/credentials/{cid}"))
            .send(&app)
            .await
            .status,
        204
    );
    assert_eq!(
        app.get("/tunnel_sessions").send(&app).await.json["tunnel_sessions"],
        json!([])
    );
    assert!(
        app.state
            .registry
            .get(&app.other_account_id, &foreign.session.id)
            .is_some()
    );
}

// ---------------------------------------------------------------- pagination

#[tokio::test]
async fn pagination_newest_first_without_duplicates_or_gaps() {
    let app = TestApp::new().await;
    let mut created = Vec::new();
    for i in 0..7 {
        created.push(
            s(&app
                .create("/credentials", json!({"description": format!("c{i}")}))
                .await["id"])
            .to_owned(),
        );
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
        let items = r.json["credentials"].as_array().unwrap();
        assert!(items.len() <= 3);
        seen.extend(items.iter().map(|c| s(&c["id"]).to_owned()));
        match r.json["next_page_uri"].as_str() {
            Some(uri) => {
                assert!(uri.starts_with(BASE), "absolute: {uri}");
                next = uri.to_owned();
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
    let r = app.get("/credentials?limit=7").send(&app).await;
    assert_eq!(r.json["next_page_uri"], Value::Null);
    // Bad parameters.
    for q in [
        "limit=0",
        "limit=101",
        "limit=abc",
        "before_id=sshca_x",
        "before_id=cr_short",
    ] {
        let r = app.get(&format!("/credentials?{q}")).send(&app).await;
        r.error(400, "ERR_TUNNEL_116");
        assert_eq!(r.field(), q.split('=').next().unwrap());
    }
    let r = app.get("/credentials?limit=100").send(&app).await;
    assert_eq!(r.status, 200);
    let r = app.get("/credentials?page=2").send(&app).await;
    r.error(400, "ERR_TUNNEL_115");
    assert_eq!(r.field(), "page");
    app.get(&format!("/credentials/{}?limit=1", created[0]))
        .send(&app)
        .await
        .error(400, "ERR_TUNNEL_115");
}

#[tokio::test]
async fn pagination_works_the_same_on_every_list() {
    let app = TestApp::new().await;
    let ed = destination(&app).await;
    let lists: [(&str, &str, Value); 6] = [
        (
            "/ssh_certificate_authorities",
            "ssh_certificate_authorities",
            json!({}),
        ),
        (
            "/event_subscriptions",
            "event_subscriptions",
            json!({"sources": [{"type": "ip_policy_created.v0"}], "destination_ids": [ed]}),
        ),
        ("/edges/tls", "tls_edges", json!({})),
        ("/backends/tunnel_group", "backends", json!({})),
        (
            "/event_destinations",
            "event_destinations",
            json!({"target": {"webhook": {"url": "https://e.example/"}}}),
        ),
        ("/credentials", "credentials", json!({})),
    ];
    for (path, field, body) in lists {
        for _ in 0..3 {
            app.create(path, body.clone()).await;
        }
        let first = app.get(&format!("{path}?limit=2")).send(&app).await;
        assert_eq!(first.json[field].as_array().unwrap().len(), 2, "{path}");
        let second = app.get(s(&first.json["next_page_uri"])).send(&app).await;
        let ids: Vec<&str> = first.json[field]
            .as_array()
            .unwrap()
            .iter()
            .chain(second.json[field].as_array().unwrap())
            .map(|v| s(&v["id"]))
            .collect();
        let total = if path == "/event_destinations" { 4 } else { 3 };
        assert_eq!(ids.len(), total, "{path}");
        assert!(ids.windows(2).all(|w| w[0] > w[1]), "{path}: {ids:?}");
    }
}

// ---------------------------------------------------------------- auth, version, wire errors

#[tokio::test]
async fn authentication_errors() {
    let app = TestApp::new().await;
    app.get("/credentials")
        .without("authorization")
        .send(&app)
        .await
        .error(401, "ERR_TUNNEL_102");
    app.get("/credentials")
        .header("authorization", "Basic dXNlcjpwYXNz")
        .send(&app)
        .await
        .error(401, "ERR_TUNNEL_103");
    app.get("/credentials")
        .header("authorization", "Bearer")
        .send(&app)
        .await
        .error(401, "ERR_TUNNEL_103");
    app.get("/credentials")
        .key("not-a-key-at-all-1234567")
        .send(&app)
        .await
        .error(401, "ERR_TUNNEL_104");
    // Right lookup, wrong secret.
    let lookup = app.admin_key.split('_').next().unwrap();
    app.get("/credentials")
        .key(&format!("{lookup}_{}", "A".repeat(43)))
        .send(&app)
        .await
        .error(401, "ERR_TUNNEL_104");
    // Authtokens are not API keys.
    let token = app.create("/credentials", json!({})).await["token"]
        .as_str()
        .unwrap()
        .to_owned();
    app.get("/credentials")
        .key(&token)
        .send(&app)
        .await
        .error(401, "ERR_TUNNEL_104");
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
    r.error(400, "ERR_TUNNEL_101");
    assert_eq!(r.json["details"]["supported_version"], "2");
    assert!(s(&r.json["msg"]).contains('2'));
    // The version is checked before the key.
    app.get("/credentials")
        .without("service-version")
        .without("authorization")
        .send(&app)
        .await
        .error(400, "ERR_TUNNEL_100");
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
        .send(&app)
        .await
        .error(400, "ERR_TUNNEL_110");
    app.post("/credentials", json!(null))
        .raw("application/json", "{} {}")
        .send(&app)
        .await
        .error(400, "ERR_TUNNEL_110");
    let r = app
        .post("/credentials", json!({"descripton": "typo"}))
        .send(&app)
        .await;
    r.error(400, "ERR_TUNNEL_111");
    assert_eq!(r.field(), "descripton");
    let accepted = r.json["details"]["accepted_fields"].as_array().unwrap();
    assert!(
        accepted.contains(&json!("description")) && accepted.contains(&json!("owner_id")),
        "{}",
        r.text
    );
    let r = app
        .post("/credentials", json!({"acl": "bind:x"}))
        .send(&app)
        .await;
    r.error(400, "ERR_TUNNEL_110");
    assert_eq!(r.field(), "acl");
    // Content types.
    app.post("/credentials", json!(null))
        .raw("text/plain", "{}")
        .send(&app)
        .await
        .error(415, "ERR_TUNNEL_113");
    app.post("/credentials", json!(null))
        .raw("", "{}")
        .send(&app)
        .await
        .error(415, "ERR_TUNNEL_113");
    let r = app
        .post("/credentials", json!(null))
        .raw("application/json; charset=utf-8", "{}")
        .send(&app)
        .await;
    assert_eq!(r.status, 201);
    // Over 1 MiB: 413, whether or not Content-Length says so up front.
    let big = json!({"description": "x".repeat(1024 * 1024)});
    app.post("/credentials", big.clone())
        .send(&app)
        .await
        .error(413, "ERR_TUNNEL_112");
    // Just under the limit is parsed (and then fails validation, not the size check).
    let under = format!("{{\"metadata\": \"{}\"}}", "x".repeat(1024 * 1024 - 20));
    app.post("/credentials", json!(null))
        .raw("application/json", under)
        .send(&app)
        .await
        .error(400, "ERR_TUNNEL_114");
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
async fn other_accounts_resources_are_not_found() {
    let app = TestApp::new().await;
    let theirs = app
        .post("/credentials", json!({}))
        .key(&app.other_key)
        .send(&app)
        .await;
    let id = s(&theirs.json["id"]).to_owned();
    let path = format!("/credentials/{id}");
    app.get(&path).send(&app).await.error(404, "ERR_TUNNEL_120");
    app.patch(&path, json!({"description": "mine now"}))
        .send(&app)
        .await
        .error(404, "ERR_TUNNEL_120");
    app.delete(&path)
        .send(&app)
        .await
        .error(404, "ERR_TUNNEL_120");
    assert_eq!(
        app.get("/credentials").send(&app).await.json["credentials"],
        json!([])
    );
    // Still there for its owner, unchanged.
    let r = app.get(&path).key(&app.other_key).send(&app).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json["description"], "");
    // Same for the other kinds.
    let ca = app
        .post("/ssh_certificate_authorities", json!({}))
        .key(&app.other_key)
        .send(&app)
        .await;
    app.get(&format!(
        "/ssh_certificate_authorities/{}",
        s(&ca.json["id"])
    ))
    .send(&app)
    .await
    .error(404, "ERR_TUNNEL_120");
    let edge = app
        .post("/edges/tls", json!({}))
        .key(&app.other_key)
        .send(&app)
        .await;
    let eid = s(&edge.json["id"]);
    app.get(&format!("/edges/tls/{eid}/backend"))
        .send(&app)
        .await
        .error(404, "ERR_TUNNEL_120");
    let bk = app.create("/backends/tunnel_group", json!({})).await;
    app.put(
        &format!("/edges/tls/{eid}/backend"),
        json!({"backend_id": bk["id"]}),
    )
    .send(&app)
    .await
    .error(404, "ERR_TUNNEL_120");
    // And a backend of another account cannot be used by my edge.
    let my_edge = app.create("/edges/tls", json!({})).await;
    let their_backend = app
        .post("/backends/tunnel_group", json!({}))
        .key(&app.other_key)
        .send(&app)
        .await;
    app.put(
        &format!("/edges/tls/{}/backend", s(&my_edge["id"])),
        json!({"backend_id": their_backend.json["id"]}),
    )
    .send(&app)
    .await
    .error(400, "ERR_TUNNEL_121");
    app.get(&format!(
        "/credentials/{}",
        make_id(IdKind::Credential, 3, [3; 14])
    ))
    .send(&app)
    .await
    .error(404, "ERR_TUNNEL_120");
    app.get("/credentials/garbage")
        .send(&app)
        .await
        .error(404, "ERR_TUNNEL_120");
}

#[tokio::test]
async fn unknown_routes_and_methods_get_json_errors() {
    let app = TestApp::new().await;
    let r = app.get("/nope").send(&app).await;
    r.error(404, "ERR_TUNNEL_130");
    app.get("/api/credentials/x/y/z")
        .send(&app)
        .await
        .error(404, "ERR_TUNNEL_130");
    app.call(axum::http::Method::PUT, "/credentials")
        .json(json!({}))
        .send(&app)
        .await
        .error(405, "ERR_TUNNEL_131");
    app.call(axum::http::Method::PATCH, "/edges/tls")
        .json(json!({}))
        .send(&app)
        .await
        .error(405, "ERR_TUNNEL_131");
    for root in ["/api", "/api/"] {
        let r = app.get(root).outside_api().send(&app).await;
        assert_eq!(r.json["error_code"], "ERR_TUNNEL_130", "{root}: {}", r.text);
    }
    // Unknown API routes answer JSON even without credentials.
    app.get("/nothing/here")
        .without("authorization")
        .send(&app)
        .await
        .error(404, "ERR_TUNNEL_130");
}

#[tokio::test]
async fn every_uri_the_api_returns_answers_get() {
    let app = TestApp::new().await;
    let ed = destination(&app).await;
    let backend = app.create("/backends/tunnel_group", json!({})).await;
    let edge = app.create("/edges/tls", json!({})).await;
    app.put(
        &format!("/edges/tls/{}/backend", s(&edge["id"])),
        json!({"backend_id": backend["id"]}),
    )
    .send(&app)
    .await;
    let cred = app.create("/credentials", json!({})).await;
    app.state
        .registry
        .insert(session(&app, 1, &app.account_id, s(&cred["id"])));
    app.create("/ssh_certificate_authorities", json!({})).await;
    app.create(
        "/event_subscriptions",
        json!({"sources": [{"type": "ip_policy_created.v0"}], "destination_ids": [ed]}),
    )
    .await;
    let mut uris = HashSet::new();
    for list in [
        "/credentials",
        "/ssh_certificate_authorities",
        "/tunnel_sessions",
        "/edges/tls",
        "/backends/tunnel_group",
        "/event_destinations",
        "/event_subscriptions",
    ] {
        collect_uris(&app.get(list).send(&app).await.json, &mut uris);
    }
    assert!(uris.len() >= 15, "{uris:?}");
    for uri in &uris {
        assert!(uri.starts_with(BASE), "absolute: {uri}");
        let r = app.get(uri).send(&app).await;
        assert_eq!(r.status, 200, "GET {uri}: {}", r.text);
    }
}

fn collect_uris(value: &Value, out: &mut HashSet<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                if (k == "uri" || k == "next_page_uri") && v.is_string() {
                    out.insert(v.as_str().unwrap().to_owned());
                }
                collect_uris(v, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| collect_uris(v, out)),
        _ => {}
    }
}

// ---------------------------------------------------------------- console, CORS, OpenAPI

#[tokio::test]
async fn console_is_served_with_index_fallback() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("index.html"), "<html>console</html>").unwrap();
    std::fs::write(dir.path().join("app.js"), "console.log(1)").unwrap();
    let mut config = tunnel_server::config::Config::in_memory();
    config.console_dir = Some(dir.path().to_owned());
    let app = TestApp::with_config(config).await;
    for (path, body) in [
        ("/", "<html>console</html>"),
        ("/app.js", "console.log(1)"),
        ("/credentials/cr_123", "<html>console</html>"),
    ] {
        let r = app
            .get(path)
            .without("authorization")
            .outside_api()
            .send(&app)
            .await;
        assert_eq!(r.status, 200, "{path}");
        assert_eq!(r.text, body, "{path}");
    }
    app.get("/api/unknown")
        .send(&app)
        .await
        .error(404, "ERR_TUNNEL_130");
}

#[tokio::test]
async fn console_files_are_gzipped_for_browsers_that_ask() {
    let dir = tempfile::tempdir().unwrap();
    // Compressible and larger than the layer's minimum size.
    let wasm_like = "0123456789abcdef".repeat(4096);
    std::fs::write(dir.path().join("index.html"), "<html>console</html>").unwrap();
    std::fs::write(dir.path().join("app_bg.wasm"), &wasm_like).unwrap();
    let mut config = tunnel_server::config::Config::in_memory();
    config.console_dir = Some(dir.path().to_owned());
    let app = TestApp::with_config(config).await;
    let gzipped = app
        .get("/app_bg.wasm")
        .without("authorization")
        .header("accept-encoding", "gzip")
        .outside_api()
        .send(&app)
        .await;
    assert_eq!(gzipped.status, 200);
    assert_eq!(gzipped.headers["content-encoding"], "gzip");
    let plain = app
        .get("/app_bg.wasm")
        .without("authorization")
        .outside_api()
        .send(&app)
        .await;
    assert!(plain.headers.get("content-encoding").is_none());
    assert_eq!(plain.text, wasm_like);
}

#[tokio::test]
async fn cors_allows_configured_origins_only() {
    let mut config = tunnel_server::config::Config::in_memory();
    config.cors_origins = vec!["https://console.example".into()];
    let app = TestApp::with_config(config).await;
    let r = app
        .call(axum::http::Method::OPTIONS, "/credentials")
        .header("origin", "https://console.example")
        .header("access-control-request-method", "POST")
        .header(
            "access-control-request-headers",
            "authorization, content-type, service-version",
        )
        .send(&app)
        .await;
    assert!(r.status < 300, "{}", r.status);
    assert_eq!(
        r.headers.get("access-control-allow-origin").unwrap(),
        "https://console.example"
    );
    let allowed = r
        .headers
        .get("access-control-allow-headers")
        .unwrap()
        .to_str()
        .unwrap()
        .to_ascii_lowercase();
    assert!(
        allowed.contains("service-version") && allowed.contains("authorization"),
        "{allowed}"
    );
    let r = app
        .get("/credentials")
        .header("origin", "https://console.example")
        .send(&app)
        .await;
    assert_eq!(
        r.headers.get("access-control-allow-origin").unwrap(),
        "https://console.example"
    );
    assert!(
        r.headers
            .get("access-control-expose-headers")
            .unwrap()
            .to_str()
            .unwrap()
            .contains("operation-id")
    );
    let r = app
        .get("/credentials")
        .header("origin", "https://evil.example")
        .send(&app)
        .await;
    assert!(r.headers.get("access-control-allow-origin").is_none());
}

#[tokio::test]
async fn openapi_covers_every_route() {
    let app = TestApp::new().await;
    let r = app
        .get("/openapi.json")
        .without("authorization")
        .without("service-version")
        .send(&app)
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json["openapi"], "3.1.0");
    assert_eq!(r.json["servers"][0]["url"], BASE);
    let documented = r.json["paths"].as_object().unwrap();
    assert!(documented.len() >= 14);
    let methods = ["get", "post", "put", "patch", "delete"];
    for (path, ops) in documented {
        let concrete = path.replace("{id}", "x").replace("{event_type}", "y.v0");
        for method in methods {
            let resp = app
                .call(method.to_uppercase().parse().unwrap(), &concrete)
                .json(json!({}))
                .send(&app)
                .await;
            let code = resp.json["error_code"].as_str().unwrap_or_default();
            if ops.get(method).is_some() {
                assert!(
                    code != "ERR_TUNNEL_130" && code != "ERR_TUNNEL_131",
                    "{method} {path} is documented but not routed: {}",
                    resp.text
                );
            } else {
                assert_eq!(
                    code, "ERR_TUNNEL_131",
                    "{method} {path} is routed but not documented: {}",
                    resp.text
                );
            }
        }
    }
}

#[tokio::test]
async fn command_style_bodies_and_unknown_field_messages() {
    let app = TestApp::new().await;
    let r = app
        .post("/credentials", json!({"descripton": "typo"}))
        .send(&app)
        .await;
    let msg = s(&r.json["msg"]);
    assert!(
        msg.starts_with("Unknown field `descripton`; the accepted fields are `description`"),
        "{msg}"
    );
    assert_eq!(msg.matches("descripton").count(), 1, "{msg}");
}
