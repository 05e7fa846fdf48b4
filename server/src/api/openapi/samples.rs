//! A sample value of every wire type, keyed by schema name, from which the document derives
//! the schemas. Struct literals on purpose: a field added to a wire type fails to compile here
//! until the sample has it, so the document cannot fall behind the code. Long because it names
//! every field of every wire type once; there is nothing else in it.

use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
use tunnel_core::ErrorCode;
use tunnel_core::resources::api_key::{ApiKey, ApiKeyCreate, ApiKeyList, ApiKeyUpdate, Me};
use tunnel_core::resources::backend::{
    TunnelGroupBackend, TunnelGroupBackendCreate, TunnelGroupBackendList, TunnelGroupBackendUpdate,
};
use tunnel_core::resources::credential::{
    Credential, CredentialCreate, CredentialList, CredentialUpdate,
};
use tunnel_core::resources::event::{Actor, Event, EventList};
use tunnel_core::resources::event_destination::{
    DeliveryAttempt, DeliveryState, DestinationTest, EventDelivery, EventDeliveryList,
    EventDestination, EventDestinationCreate, EventDestinationList, EventDestinationUpdate,
    EventTarget, WebhookTarget,
};
use tunnel_core::resources::event_subscription::{
    EventSource, EventSourceCreate, EventSourceList, EventSourceReplace, EventSourceUpdate,
    EventSubscription, EventSubscriptionCreate, EventSubscriptionList, EventSubscriptionUpdate,
};
use tunnel_core::resources::ssh_ca::{
    SshCertificateAuthority, SshCertificateAuthorityCreate, SshCertificateAuthorityList,
    SshCertificateAuthorityUpdate,
};
use tunnel_core::resources::tls_edge::{
    TlsEdge, TlsEdgeBackend, TlsEdgeBackendModule, TlsEdgeBackendReplace, TlsEdgeCreate,
    TlsEdgeList, TlsEdgeUpdate, UNSUPPORTED_EDGE_MODULES,
};
use tunnel_core::resources::tunnel_session::{
    AgentCommandRequest, AgentUpdateState, TunnelSession, TunnelSessionList,
};
use tunnel_core::resources::{ListPage, Ref};

fn to_value<T: Serialize>(v: T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

fn s(text: &str) -> Option<String> {
    Some(text.to_owned())
}

fn backend_module() -> TlsEdgeBackendModule {
    TlsEdgeBackendModule {
        enabled: Some(true),
        backend_id: "bkdtg_".into(),
    }
}

/// A TLS edge request (create or update) with the modules it accepts only as `null`, and
/// `also_null` ones, written as `null` (the document types them as such), since a sample cannot
/// hold another value for them.
fn with_null_modules(request: impl Serialize, also_null: &[&str]) -> Value {
    let mut value = to_value(request);
    if let Value::Object(map) = &mut value {
        for name in UNSUPPORTED_EDGE_MODULES.iter().chain(also_null) {
            map.insert((*name).to_owned(), Value::Null);
        }
    }
    value
}

/// A list page of one item, written as every list page of `tunnel-core` is (its `ListPage`
/// fields: the items' property, `uri`, `next_page_uri`).
fn list<P: ListPage<Item: Serialize>>(item: P::Item) -> Value {
    let mut page = serde_json::Map::new();
    page.insert(P::FIELD.to_owned(), to_value(vec![item]));
    page.insert("uri".to_owned(), to_value("u"));
    page.insert("next_page_uri".to_owned(), to_value("uri"));
    Value::Object(page)
}

/// A sample of every wire type, keyed by schema name. Struct literals on purpose (see above);
/// list pages through [`list`], their fields being declared once by `tunnel-core`.
pub fn samples() -> BTreeMap<&'static str, Value> {
    let r = || Ref {
        id: "id".into(),
        uri: "uri".into(),
    };
    let credential = Credential {
        id: "cr_".into(),
        uri: "uri".into(),
        created_at: "t".into(),
        description: "d".into(),
        metadata: "m".into(),
        token: s("token"),
        acl: vec!["bind:example.com".into()],
        owner_id: "usr_".into(),
    };
    let api_key = ApiKey {
        id: "ak_".into(),
        uri: "uri".into(),
        created_at: "t".into(),
        description: "d".into(),
        metadata: "m".into(),
        token: s("token"),
        owner_id: "usr_".into(),
    };
    let ssh_ca = SshCertificateAuthority {
        id: "sshca_".into(),
        uri: "uri".into(),
        created_at: "t".into(),
        description: "d".into(),
        metadata: "m".into(),
        public_key: "ssh-ed25519 AAAA".into(),
        key_type: "ed25519".into(),
    };
    let session = TunnelSession {
        id: "ts_".into(),
        uri: "uri".into(),
        agent_version: "3.4.1".into(),
        credential: r(),
        ip: "127.0.0.1".into(),
        metadata: "m".into(),
        os: "linux".into(),
        region: "local".into(),
        started_at: "t".into(),
        transport: "tunnel/v2".into(),
        agent_update_target: s("3.4.2"),
        agent_update_checks: true,
        agent_update_state: Some(AgentUpdateState::Updated {
            version: "3.4.2".into(),
            restart_available_in_secs: 7,
        }),
    };
    let module = TlsEdgeBackend {
        enabled: true,
        backend: r(),
    };
    let edge = TlsEdge {
        id: "edgtls_".into(),
        uri: "uri".into(),
        created_at: "t".into(),
        description: "d".into(),
        metadata: "m".into(),
        hostports: vec!["example.com:443".into()],
        backend: Some(module.clone()),
    };
    let backend = TunnelGroupBackend {
        id: "bkdtg_".into(),
        uri: "uri".into(),
        created_at: "t".into(),
        description: "d".into(),
        metadata: "m".into(),
        labels: BTreeMap::from([("k".into(), "v".into())]),
        tunnels: vec![r()],
    };
    let target = EventTarget {
        webhook: Some(WebhookTarget {
            url: "https://".into(),
        }),
    };
    let destination = EventDestination {
        id: "ed_".into(),
        uri: "uri".into(),
        created_at: "t".into(),
        description: "d".into(),
        metadata: "m".into(),
        format: "json".into(),
        target: target.clone(),
        signing_secret: Some("whsec_".into()),
    };
    let attempt = DeliveryAttempt {
        attempted_at: "t".into(),
        status_code: Some(500),
        latency_ms: 1,
        error: s("e"),
        response_body: s("b"),
    };
    let delivery = EventDelivery {
        id: "dlv_".into(),
        event_id: "ev_".into(),
        event_type: "credential_created.v0".into(),
        created_at: "t".into(),
        state: DeliveryState::Pending,
        next_attempt_at: s("t"),
        attempts: vec![attempt.clone()],
    };
    let source = EventSource {
        event_type: "credential_created.v0".into(),
        uri: "uri".into(),
    };
    let subscription = EventSubscription {
        id: "esb_".into(),
        uri: "uri".into(),
        created_at: "t".into(),
        description: "d".into(),
        metadata: "m".into(),
        sources: vec![source.clone()],
        destinations: vec![r()],
    };
    let event = Event {
        id: "ev_".into(),
        uri: "uri".into(),
        event_type: "credential_updated.v0".into(),
        occurred_at: "t".into(),
        actor: Actor::principal("usr_", "ak_"),
        operation_id: s("op_"),
        object_id: "cr_".into(),
        object: serde_json::json!({}),
        changed_fields: vec!["description".into()],
        details: serde_json::Map::new(),
    };
    let replace = || {
        Some(vec![EventSourceReplace {
            event_type: "credential_created.v0".into(),
        }])
    };
    BTreeMap::from([
        ("Credential", to_value(&credential)),
        ("CredentialList", list::<CredentialList>(credential)),
        (
            "CredentialCreate",
            to_value(CredentialCreate {
                description: s("d"),
                metadata: s("m"),
                acl: Some(vec!["*".into()]),
                owner_id: s("usr_"),
            }),
        ),
        (
            "CredentialUpdate",
            to_value(CredentialUpdate {
                id: s("cr_"),
                description: s("d"),
                metadata: s("m"),
                acl: Some(vec!["*".into()]),
            }),
        ),
        ("ApiKey", to_value(&api_key)),
        ("ApiKeyList", list::<ApiKeyList>(api_key)),
        (
            "ApiKeyCreate",
            to_value(ApiKeyCreate {
                description: s("d"),
                metadata: s("m"),
                owner_id: s("usr_"),
            }),
        ),
        (
            "ApiKeyUpdate",
            to_value(ApiKeyUpdate {
                id: s("ak_"),
                description: s("d"),
                metadata: s("m"),
            }),
        ),
        (
            "Me",
            to_value(Me {
                principal_id: "usr_".into(),
                principal_kind: "user".into(),
                is_admin: true,
                account_id: "acct_".into(),
                account_name: "default".into(),
                api_key_id: "ak_".into(),
            }),
        ),
        ("SshCertificateAuthority", to_value(&ssh_ca)),
        (
            "SshCertificateAuthorityList",
            list::<SshCertificateAuthorityList>(ssh_ca),
        ),
        (
            "SshCertificateAuthorityCreate",
            to_value(SshCertificateAuthorityCreate {
                description: s("d"),
                metadata: s("m"),
                private_key_type: s("ecdsa"),
                elliptic_curve: s("p256"),
                key_size: Some(4096),
            }),
        ),
        (
            "SshCertificateAuthorityUpdate",
            to_value(SshCertificateAuthorityUpdate {
                id: s("sshca_"),
                description: s("d"),
                metadata: s("m"),
            }),
        ),
        ("TunnelSession", to_value(&session)),
        ("TunnelSessionList", list::<TunnelSessionList>(session)),
        (
            "AgentCommandRequest",
            to_value(AgentCommandRequest::default()),
        ),
        ("TlsEdge", to_value(&edge)),
        ("TlsEdgeList", list::<TlsEdgeList>(edge)),
        (
            "TlsEdgeCreate",
            with_null_modules(
                TlsEdgeCreate {
                    description: s("d"),
                    metadata: s("m"),
                    hostports: Some(vec!["example.com:443".into()]),
                    backend: Some(backend_module()),
                    ip_restriction: None,
                    mutual_tls: None,
                    tls_termination: None,
                    traffic_policy: None,
                },
                &[],
            ),
        ),
        (
            "TlsEdgeUpdate",
            // `backend` too: an update takes it only as `null` (the module has its own routes).
            with_null_modules(
                TlsEdgeUpdate {
                    id: s("edgtls_"),
                    description: s("d"),
                    metadata: s("m"),
                    hostports: Some(vec!["example.com:443".into()]),
                    backend: None,
                    ip_restriction: None,
                    mutual_tls: None,
                    tls_termination: None,
                    traffic_policy: None,
                },
                &["backend"],
            ),
        ),
        ("TlsEdgeBackend", to_value(&module)),
        (
            "TlsEdgeBackendReplace",
            // Both forms in one sample, so the schema has every property either form uses.
            to_value(TlsEdgeBackendReplace {
                id: s("edgtls_"),
                enabled: Some(true),
                backend_id: "bkdtg_".into(),
                module: Some(backend_module()),
            }),
        ),
        ("TunnelGroupBackend", to_value(&backend)),
        (
            "TunnelGroupBackendList",
            list::<TunnelGroupBackendList>(backend),
        ),
        (
            "TunnelGroupBackendCreate",
            to_value(TunnelGroupBackendCreate {
                description: s("d"),
                metadata: s("m"),
                labels: Some(BTreeMap::from([("k".into(), "v".into())])),
            }),
        ),
        (
            "TunnelGroupBackendUpdate",
            to_value(TunnelGroupBackendUpdate {
                id: s("bkdtg_"),
                description: s("d"),
                metadata: s("m"),
                labels: Some(BTreeMap::from([("k".into(), "v".into())])),
            }),
        ),
        ("EventDestination", to_value(&destination)),
        (
            "EventDestinationList",
            list::<EventDestinationList>(destination),
        ),
        (
            "EventDestinationCreate",
            to_value(EventDestinationCreate {
                description: s("d"),
                metadata: s("m"),
                format: s("json"),
                target: target.clone(),
            }),
        ),
        (
            "EventDestinationUpdate",
            to_value(EventDestinationUpdate {
                id: s("ed_"),
                description: s("d"),
                metadata: s("m"),
                format: s("json"),
                target: Some(target),
            }),
        ),
        ("EventDeliveryList", list::<EventDeliveryList>(delivery)),
        (
            "DestinationTest",
            to_value(DestinationTest {
                event_id: "ev_".into(),
                attempt,
            }),
        ),
        (
            "EventSourceList",
            to_value(EventSourceList {
                sources: vec![source.clone()],
                uri: "uri".into(),
            }),
        ),
        (
            "EventSourceCreate",
            to_value(EventSourceCreate {
                subscription_id: s("esb_"),
                event_type: "credential_created.v0".into(),
            }),
        ),
        (
            "EventSourceUpdate",
            to_value(EventSourceUpdate {
                subscription_id: s("esb_"),
                event_type: s("credential_created.v0"),
            }),
        ),
        ("EventSource", to_value(&source)),
        ("Event", to_value(&event)),
        ("EventList", list::<EventList>(event)),
        ("EventSubscription", to_value(&subscription)),
        (
            "EventSubscriptionList",
            list::<EventSubscriptionList>(subscription),
        ),
        (
            "EventSubscriptionCreate",
            to_value(EventSubscriptionCreate {
                metadata: s("m"),
                description: s("d"),
                sources: replace(),
                destination_ids: Some(vec!["ed_".into()]),
            }),
        ),
        (
            "EventSubscriptionUpdate",
            to_value(EventSubscriptionUpdate {
                id: s("esb_"),
                metadata: s("m"),
                description: s("d"),
                sources: replace(),
                destination_ids: Some(vec!["ed_".into()]),
            }),
        ),
        ("ErrorBody", {
            let mut body = tunnel_core::ErrorBody::new(ErrorCode::InvalidField, "msg");
            body.details.operation_id = "op_".into();
            body.details.field = s("field");
            body.details.errors = vec![tunnel_core::FieldError::new("field", "message")];
            to_value(body)
        }),
    ])
}
