//! The official Rust client library (crates.io `ngrok-api`) against the in-process server over a
//! real socket: it creates and updates a tunnel-group backend and decodes it with its `tunnels`
//! (a live session carrying the labels), creates TLS edges with its create body (every edge
//! module it knows, `null` or `backend` set), updates one with its update body (every field,
//! `null` when not set; a `backend` set there is refused, the module having its own routes) and
//! replaces the backend module with its wrapped body (`{"id", "module": {…}}`), decoding every
//! answer with its own types; and adds, lists, gets,
//! updates and removes a subscription's event sources with its own requests; creates, pages
//! through, updates and deletes API keys, the deleted key then refused; creates credentials
//! with its create body (`owner_id` `null`), pages through them one a page by the
//! `next_page_uri` the server gives, updates one with its update body (`null` for what stays)
//! and reads a live session of it with its session type, which requires every field; and
//! creates SSH certificate authorities with its create body (`""` and `0` for key parameters
//! not chosen), a refused one decoded as its error type, then updates, lists and deletes them.
//!
//! The client is used as a user would, with nothing bridged: it talks to the API alone at the
//! root of its address (`--api-listen`, as `tunnel_server::api_alone`), its base URL, because it
//! joins its paths (`/edges/tls`) to the root of a base URL, dropping any `/api`; the server's
//! public URL is that root, so the next pages' URLs it follows lead there too; and it sends its
//! version as `Ngrok-Version: 2`, which the server takes for `Service-Version`.

use futures_util::TryStreamExt as _;
use ngrok_api::types::{
    APIKey, APIKeyCreate, APIKeyUpdate, Credential, CredentialCreate, CredentialUpdate,
    EdgeBackendReplace, EndpointBackendMutate, EventSourceCreate, EventSourceItem,
    EventSourceReplace, EventSourceUpdate, EventSubscriptionCreate, FilteredPaging,
    SSHCertificateAuthority, SSHCertificateAuthorityCreate, SSHCertificateAuthorityUpdate,
    TLSEdgeCreate, TLSEdgeUpdate, TunnelGroupBackendCreate, TunnelGroupBackendUpdate,
    TunnelSession,
};
use ngrok_api::{ClientBuilder, Error};
use serde_json::json;
use std::collections::HashMap;
use std::net::SocketAddr;
use tunnel_core::acl::Bind;
use tunnel_core::ids::{IdKind, make_id};
use tunnel_server::agents::LiveSession;
use tunnel_server::state::AppState;

/// The API alone on a loopback port, at its root (see the module comment); the state (for the
/// registry) and an API key of its account.
async fn serve() -> (SocketAddr, AppState, String, String) {
    let (addr, state, _) = crate::on_socket(
        |config| config.public_url = format!("http://{}", config.listen),
        tunnel_server::api_alone,
    )
    .await;
    let created = state
        .store
        .create_account("official", "admin")
        .await
        .unwrap();
    (addr, state, created.account_id, created.api_key)
}

fn client(addr: SocketAddr, key: &str) -> ngrok_api::Client {
    let mut builder = ClientBuilder::new(key.to_owned());
    builder.api_url(format!("http://{addr}").parse().unwrap());
    builder.build()
}

/// A live session of `account` whose agent bound `binds`.
fn live(state: &AppState, account: &str, binds: &[&str]) -> LiveSession {
    let id = make_id(IdKind::TunnelSession, 1_700_000_000_000, [7; 14]);
    let session = serde_json::from_value(json!({
        "id": id,
        "uri": state.uri(&tunnel_core::paths::tunnel_session(&id)),
        "agent_version": "3.4.0",
        "credential": {"id": "cr_x", "uri": state.uri(&tunnel_core::paths::credential("cr_x"))},
        "ip": "127.0.0.1",
        "metadata": "",
        "os": "linux",
        "region": "local",
        "started_at": "2026-01-01T00:00:00Z",
        "transport": "tunnel/v2",
    }))
    .unwrap();
    LiveSession {
        session,
        account_id: account.to_owned(),
        credential_id: "cr_x".into(),
        binds: binds.iter().map(|b| Bind::parse(b).unwrap()).collect(),
    }
}

#[tokio::test]
async fn the_official_client_library_works_with_tls_edges_and_backends() {
    let (addr, state, account, key) = serve().await;
    let c = client(addr, &key);
    let session = live(&state, &account, &["env=prod", "app.example.com"]);
    let session_id = session.session.id.clone();
    state.sessions().register(session).await.unwrap();

    let backend = c
        .backends()
        .tunnel_group()
        .create(&TunnelGroupBackendCreate {
            description: "pool".into(),
            metadata: String::new(),
            labels: HashMap::from([("env".into(), "prod".into())]),
        })
        .await
        .unwrap();
    assert!(backend.id.starts_with("bkdtg_"), "{}", backend.id);
    assert_eq!(backend.tunnels.len(), 1);
    assert_eq!(backend.tunnels[0].id, session_id);
    let read = c.backends().tunnel_group().get(&backend.id).await.unwrap();
    assert_eq!(read.tunnels[0].uri, backend.tunnels[0].uri);
    // Its update sends every field, `labels` always: the labels it sends are the new set.
    let updated = c
        .backends()
        .tunnel_group()
        .update(&TunnelGroupBackendUpdate {
            id: backend.id.clone(),
            description: Some("blue pool".into()),
            metadata: None,
            labels: HashMap::from([("env".into(), "prod".into()), ("zone".into(), "a".into())]),
        })
        .await
        .unwrap();
    assert_eq!(updated.description, "blue pool");
    assert_eq!(updated.labels.len(), 2);
    assert!(updated.tunnels.is_empty(), "the session has no zone=a");

    // Create as the client sends it: every module `null`…
    let edge = c
        .edges()
        .tls()
        .create(&TLSEdgeCreate {
            hostports: Some(vec!["app.example.com:443".into()]),
            ..TLSEdgeCreate::default()
        })
        .await
        .unwrap();
    assert!(edge.id.starts_with("edgtls_"), "{}", edge.id);
    assert!(edge.backend.is_none());
    // …or with the backend module set.
    let module = EndpointBackendMutate {
        enabled: None,
        backend_id: backend.id.clone(),
    };
    let with_backend = c
        .edges()
        .tls()
        .create(&TLSEdgeCreate {
            backend: Some(module.clone()),
            ..TLSEdgeCreate::default()
        })
        .await
        .unwrap();
    let set = with_backend.backend.unwrap();
    assert_eq!(
        (set.enabled, set.backend.id),
        (Some(true), backend.id.clone())
    );

    // Its update: every field and module sent, `null` when not set; the module stays.
    let updated = c
        .edges()
        .tls()
        .update(&TLSEdgeUpdate {
            id: with_backend.id.clone(),
            hostports: Some(vec!["shop.example.com:443".into()]),
            ..TLSEdgeUpdate::default()
        })
        .await
        .unwrap();
    assert_eq!(updated.hostports, Some(vec!["shop.example.com:443".into()]));
    assert_eq!(
        updated.backend.map(|m| m.backend.id),
        Some(backend.id.clone())
    );
    // A module given there is refused by name: the module has its own routes.
    let refused = c
        .edges()
        .tls()
        .update(&TLSEdgeUpdate {
            id: edge.id.clone(),
            backend: Some(module.clone()),
            ..TLSEdgeUpdate::default()
        })
        .await;
    match refused {
        Err(Error::Ngrok(e)) => {
            assert_eq!(e.error_code, "ERR_TUNNEL_114", "{}", e.msg);
            assert!(e.msg.contains("/backend"), "{}", e.msg);
        }
        other => panic!("expected a 400: {other:?}"),
    }

    // The module's replace, wrapped in `module`.
    let modules = c.edge_modules().tls_edge_backend();
    let replaced = modules
        .replace(&EdgeBackendReplace {
            id: edge.id.clone(),
            module: EndpointBackendMutate {
                enabled: Some(false),
                ..module
            },
        })
        .await
        .unwrap();
    assert_eq!(replaced.enabled, Some(false));
    assert_eq!(replaced.backend.id, backend.id);
    let read = modules.get(&edge.id).await.unwrap();
    assert_eq!((read.enabled, read.backend.id), (Some(false), backend.id));

    // Errors reach it as its own error type, with this API's code.
    let refused = modules
        .replace(&EdgeBackendReplace {
            id: edge.id.clone(),
            module: EndpointBackendMutate {
                enabled: None,
                backend_id: "ed_x".into(),
            },
        })
        .await;
    match refused {
        Err(Error::Ngrok(e)) => assert_eq!(e.error_code, "ERR_TUNNEL_114", "{}", e.msg),
        other => panic!("expected a 400: {other:?}"),
    }
    modules.delete(&edge.id).await.unwrap();
    c.edges().tls().delete(&edge.id).await.unwrap();
}

#[tokio::test]
async fn the_official_client_library_adds_lists_and_removes_event_sources() {
    let (addr, _state, _account, key) = serve().await;
    let c = client(addr, &key);
    let subscription = c
        .event_subscriptions()
        .create(&EventSubscriptionCreate {
            sources: vec![EventSourceReplace {
                r#type: "credential_created.v0".into(),
            }],
            ..EventSubscriptionCreate::default()
        })
        .await
        .unwrap();
    let sources = c.event_sources();
    let added = sources
        .create(&EventSourceCreate {
            subscription_id: subscription.id.clone(),
            r#type: "tls_edge_created.v0".into(),
        })
        .await
        .unwrap();
    assert_eq!(added.r#type, "tls_edge_created.v0");
    let listed = sources.list(&subscription.id).await.unwrap();
    let types: Vec<&str> = listed.sources.iter().map(|s| s.r#type.as_str()).collect();
    assert_eq!(types, ["credential_created.v0", "tls_edge_created.v0"]);
    let item = EventSourceItem {
        subscription_id: subscription.id.clone(),
        r#type: "tls_edge_created.v0".into(),
    };
    assert_eq!(sources.get(&item).await.unwrap().uri, added.uri);
    let updated = sources
        .update(&EventSourceUpdate {
            subscription_id: subscription.id.clone(),
            r#type: "tls_edge_created.v0".into(),
        })
        .await
        .unwrap();
    assert_eq!(updated.uri, added.uri);
    sources.delete(&item).await.unwrap();
    match sources.get(&item).await {
        Err(Error::Ngrok(e)) => assert_eq!(e.error_code, "ERR_TUNNEL_120", "{}", e.msg),
        other => panic!("expected a 404: {other:?}"),
    }
    let read = c.event_subscriptions().get(&subscription.id).await.unwrap();
    assert_eq!(read.sources.len(), 1);
}

#[tokio::test]
async fn the_official_client_library_creates_lists_updates_and_revokes_api_keys() {
    let (addr, _state, _account, key) = serve().await;
    let c = client(addr, &key);
    let keys = c.api_keys();
    let created = keys
        .create(&APIKeyCreate {
            description: "made by the official client".into(),
            metadata: "{}".into(),
            owner_id: None,
        })
        .await
        .unwrap();
    let token = created
        .token
        .clone()
        .expect("the key in the creation answer");
    assert!(created.owner_id.is_some());
    // Its own paging stream finds it, without the key.
    let listed: Vec<APIKey> = keys
        .list(FilteredPaging::default())
        .keys()
        .await
        .try_collect()
        .await
        .unwrap();
    let found = listed.iter().find(|k| k.id == created.id).expect("listed");
    assert_eq!(found.token, None);
    let updated = keys
        .update(&APIKeyUpdate {
            id: created.id.clone(),
            description: Some("renamed".into()),
            metadata: None,
        })
        .await
        .unwrap();
    assert_eq!(
        (updated.description.as_str(), updated.metadata.as_str()),
        ("renamed", "{}")
    );
    assert_eq!(keys.get(&created.id).await.unwrap().description, "renamed");
    // The new key works through the client, then no longer once deleted.
    let with_new = client(addr, &token);
    assert!(with_new.api_keys().get(&created.id).await.is_ok());
    keys.delete(&created.id).await.unwrap();
    match with_new.api_keys().get(&created.id).await {
        Err(Error::Ngrok(e)) => assert_eq!(e.error_code, "ERR_TUNNEL_104", "{}", e.msg),
        other => panic!("expected a 401: {other:?}"),
    }
}

#[tokio::test]
async fn the_official_client_library_manages_credentials_and_reads_their_sessions() {
    let (addr, state, account, key) = serve().await;
    let c = client(addr, &key);
    let credentials = c.credentials();
    // Its create body: every field, `owner_id` `null`, `acl` a list.
    let created = credentials
        .create(&CredentialCreate {
            description: "made by the official client".into(),
            metadata: String::new(),
            acl: vec!["bind:*.example.com".into(), "bind:env=prod".into()],
            owner_id: None,
        })
        .await
        .unwrap();
    assert!(
        created.token.is_some(),
        "the authtoken in the creation answer"
    );
    assert!(created.owner_id.is_some(), "owned by the key's user");
    let plain = credentials
        .create(&CredentialCreate::default())
        .await
        .unwrap();
    assert!(plain.acl.is_empty());
    // Its paging stream, one credential a page, follows `next_page_uri` to the end.
    let listed: Vec<Credential> = credentials
        .list(FilteredPaging {
            limit: Some("1".into()),
            ..FilteredPaging::default()
        })
        .credentials()
        .await
        .try_collect()
        .await
        .unwrap();
    let ids: Vec<&str> = listed.iter().map(|k| k.id.as_str()).collect();
    assert_eq!(ids, [plain.id.as_str(), created.id.as_str()]);
    assert!(listed.iter().all(|k| k.token.is_none()));
    // Its update body: every field, `null` when not changed.
    let updated = credentials
        .update(&CredentialUpdate {
            id: created.id.clone(),
            description: None,
            metadata: Some("{\"team\":\"edge\"}".into()),
            acl: Some(vec!["bind:a.example.com".into()]),
        })
        .await
        .unwrap();
    assert_eq!(updated.description, "made by the official client");
    assert_eq!(updated.acl, ["bind:a.example.com"]);

    // A live session of that credential, decoded with the client's own session type.
    let mut session = live(&state, &account, &["a.example.com"]);
    session.credential_id = created.id.clone();
    session.session.credential.id = created.id.clone();
    let session_id = session.session.id.clone();
    state.sessions().register(session).await.unwrap();
    let sessions: Vec<TunnelSession> = c
        .tunnel_sessions()
        .list(FilteredPaging::default())
        .tunnel_sessions()
        .await
        .try_collect()
        .await
        .unwrap();
    assert_eq!(sessions.len(), 1);
    let read = c.tunnel_sessions().get(&session_id).await.unwrap();
    assert_eq!(
        (read.credential.id.as_str(), read.agent_version.as_str()),
        (created.id.as_str(), "3.4.0")
    );

    credentials.delete(&created.id).await.unwrap();
    match credentials.get(&created.id).await {
        Err(Error::Ngrok(e)) => assert_eq!(e.error_code, "ERR_TUNNEL_120", "{}", e.msg),
        other => panic!("expected a 404: {other:?}"),
    }
}

#[tokio::test]
async fn the_official_client_library_manages_ssh_certificate_authorities() {
    let (addr, _state, _account, key) = serve().await;
    let c = client(addr, &key);
    let cas = c.ssh_certificate_authorities();
    // Its create body with nothing chosen: `""` and `0` for the key's parameters, so the
    // default key (ed25519).
    let default = cas
        .create(&SSHCertificateAuthorityCreate::default())
        .await
        .unwrap();
    assert_eq!(default.key_type, "ed25519");
    assert!(default.public_key.starts_with("ssh-ed25519 "));
    let ecdsa = cas
        .create(&SSHCertificateAuthorityCreate {
            description: "hosts".into(),
            private_key_type: "ecdsa".into(),
            elliptic_curve: "p384".into(),
            ..SSHCertificateAuthorityCreate::default()
        })
        .await
        .unwrap();
    assert!(ecdsa.public_key.starts_with("ecdsa-sha2-nistp384 "));
    // A key size for an ecdsa key is refused, with the field named.
    match cas
        .create(&SSHCertificateAuthorityCreate {
            private_key_type: "ecdsa".into(),
            key_size: 2048,
            ..SSHCertificateAuthorityCreate::default()
        })
        .await
    {
        Err(Error::Ngrok(e)) => {
            assert_eq!(e.error_code, "ERR_TUNNEL_114", "{}", e.msg);
            assert!(e.msg.contains("key size"), "{}", e.msg);
        }
        other => panic!("expected a 400: {other:?}"),
    }
    let updated = cas
        .update(&SSHCertificateAuthorityUpdate {
            id: ecdsa.id.clone(),
            description: Some("host keys".into()),
            metadata: None,
        })
        .await
        .unwrap();
    assert_eq!(updated.description, "host keys");
    assert_eq!(updated.public_key, ecdsa.public_key);
    let listed: Vec<SSHCertificateAuthority> = cas
        .list(FilteredPaging::default())
        .ssh_certificate_authorities()
        .await
        .try_collect()
        .await
        .unwrap();
    assert_eq!(listed.len(), 2);
    cas.delete(&default.id).await.unwrap();
    assert_eq!(cas.get(&ecdsa.id).await.unwrap().description, "host keys");
}
