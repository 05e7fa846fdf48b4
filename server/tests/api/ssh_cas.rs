//! SSH certificate authorities (`docs/api/ssh_cas.md`): real keys of every
//! type (checked with `ssh-keygen -l`), the private key sealed and never returned, RSA 4096
//! generated off the runtime, get, list, partial update, delete, bad key parameters, and 503
//! when no key generation permit frees up in time.

use crate::common::{BASE, TestApp};
use serde_json::{Value, json};
use std::time::Duration;
use tunnel_core::resources::ssh_ca::{SshCertificateAuthority, SshCertificateAuthorityList};
use tunnel_server::keys::KeyGenLimiter;

/// `ssh-keygen -l` of one public key line: "<bits> SHA256:<fingerprint> <comment> (<TYPE>)".
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
        let r = app
            .post("/ssh_certificate_authorities", body.clone())
            .send(&app)
            .await;
        assert_eq!(r.status, 201, "{}", r.text);
        // Raw JSON on purpose: the private key must be absent from the body, not merely
        // ignored by the typed decoding.
        assert!(r.json.get("private_key").is_none());
        let ca: SshCertificateAuthority = r.body();
        let id = ca.id.clone();
        assert!(id.starts_with("sshca_"));
        assert_eq!(ca.key_type, key_type, "{body}");
        let public = ca.public_key.clone();
        let parts: Vec<&str> = public.split(' ').collect();
        assert_eq!(parts.len(), 2, "one line `<algorithm> <base64>`: {public}");
        assert_eq!(parts[0], algorithm);
        assert!(!public.contains('\n'));
        let fingerprint = ssh_keygen_fingerprint(&public);
        assert!(
            fingerprint.starts_with(&format!("{bits} SHA256:")),
            "{fingerprint}"
        );
        // What the console shows of it: the curve or the size ssh-keygen reads too.
        let label = tunnel_core::ssh::KeySpec::of_public_key(&public)
            .map(tunnel_core::ssh::KeySpec::label)
            .unwrap_or_default();
        let expected = match key_type {
            "ed25519" => "Ed25519".to_owned(),
            "ecdsa" => format!("ECDSA P-{bits}"),
            _ => format!("RSA {bits}"),
        };
        assert_eq!(label, expected);
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
    let ca: SshCertificateAuthority = ca.body();
    assert_eq!(ca.key_type, "rsa");
    assert!(ssh_keygen_fingerprint(&ca.public_key).starts_with("4096 SHA256:"));
}

#[tokio::test]
async fn ssh_ca_get_list_update_delete() {
    let app = TestApp::new().await;
    let body = json!({"description": "hosts", "metadata": "m"});
    let ca: SshCertificateAuthority = app.created("/ssh_certificate_authorities", body).await;
    let uri = format!("/ssh_certificate_authorities/{}", ca.id);
    assert_eq!(
        app.get(&uri)
            .send(&app)
            .await
            .body::<SshCertificateAuthority>(),
        ca
    );
    let list: SshCertificateAuthorityList = app
        .get("/ssh_certificate_authorities")
        .send(&app)
        .await
        .body();
    assert_eq!(list.ssh_certificate_authorities[0], ca);
    assert_eq!(list.uri, format!("{BASE}/ssh_certificate_authorities"));
    let r = app.patch(&uri, json!({"metadata": "new"})).send(&app).await;
    assert_eq!(r.status, 200);
    let r: SshCertificateAuthority = r.body();
    assert_eq!(r.metadata, "new");
    assert_eq!(r.description, "hosts");
    assert_eq!(r.public_key, ca.public_key);
    app.patch(&uri, json!({"key_type": "rsa"}))
        .fails(&app, 400, "ERR_TUNNEL_111")
        .await;
    app.deleted(&uri).await;
    app.gone(&uri).await;
}

#[tokio::test]
async fn ssh_ca_bad_key_parameters() {
    let app = TestApp::new().await;
    let cases: [(Value, &str); 6] = [
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
    r.error_at(400, "ERR_TUNNEL_110", "key_size");
    let list: SshCertificateAuthorityList = app.fetch("/ssh_certificate_authorities").await;
    assert!(list.ssh_certificate_authorities.is_empty());
}

#[tokio::test]
async fn rsa_key_generation_answers_503_when_no_permit_frees_up_in_time() {
    let base = TestApp::new().await;
    let state = base
        .state
        .clone()
        .with(|parts| parts.keygen = KeyGenLimiter::new(1, Duration::from_millis(100)));
    let app = TestApp {
        router: tunnel_server::app(state.clone()),
        state,
        ..base
    };
    let held = app.state.keygen.acquire().await.unwrap();
    let rsa = json!({"private_key_type": "rsa", "key_size": 2048});
    let r = app
        .post("/ssh_certificate_authorities", rsa.clone())
        .send(&app)
        .await;
    let error = r.error(503, "ERR_TUNNEL_160");
    // When to try again, in the header and the body, as every 429 and 409 that has one.
    assert_eq!(r.headers["retry-after"], "1", "{}", r.text);
    assert_eq!(error.details.extra["retry_after_secs"], 1);
    // The keys of a millisecond do not wait behind RSA generations of seconds.
    for body in [
        json!({"private_key_type": "ed25519"}),
        json!({"private_key_type": "ecdsa", "elliptic_curve": "p521"}),
    ] {
        app.create("/ssh_certificate_authorities", body).await;
    }
    drop(held);
    app.create("/ssh_certificate_authorities", rsa).await;
}
