//! The schemas of the document's components, from the wire types' own `ToSchema` derives.

use serde_json::{Map, Value};
use tunnel_core::ErrorBody;
use tunnel_core::resources::api_key::{ApiKey, ApiKeyCreate, ApiKeyList, ApiKeyUpdate, Me};
use tunnel_core::resources::backend::{
    TunnelGroupBackend, TunnelGroupBackendCreate, TunnelGroupBackendList, TunnelGroupBackendUpdate,
};
use tunnel_core::resources::credential::{
    Credential, CredentialCreate, CredentialList, CredentialUpdate,
};
use tunnel_core::resources::event::{Event, EventList};
use tunnel_core::resources::event_destination::{
    DestinationTest, EventDeliveryList, EventDestination, EventDestinationCreate,
    EventDestinationList, EventDestinationUpdate,
};
use tunnel_core::resources::event_subscription::{
    EventSource, EventSourceCreate, EventSourceList, EventSourceUpdate, EventSubscription,
    EventSubscriptionCreate, EventSubscriptionList, EventSubscriptionUpdate,
};
use tunnel_core::resources::ssh_ca::{
    SshCertificateAuthority, SshCertificateAuthorityCreate, SshCertificateAuthorityList,
    SshCertificateAuthorityUpdate,
};
use tunnel_core::resources::tls_edge::{
    TlsEdge, TlsEdgeBackend, TlsEdgeBackendReplace, TlsEdgeCreate, TlsEdgeList, TlsEdgeUpdate,
};
use tunnel_core::resources::tunnel_session::{
    AgentCommandRequest, TunnelSession, TunnelSessionList,
};
use tunnel_core::resources::user::{User, UserList};
use utoipa::ToSchema;
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::Schema;

type Collected = Vec<(String, RefOr<Schema>)>;

fn add<T: ToSchema>(all: &mut Collected) {
    all.push((T::name().into_owned(), T::schema()));
    T::schemas(all);
}

/// Every schema the operations name, and every schema those refer to, by name.
pub fn schemas() -> Map<String, Value> {
    let mut all = Collected::new();
    add::<ErrorBody>(&mut all);
    add::<Credential>(&mut all);
    add::<CredentialCreate>(&mut all);
    add::<CredentialUpdate>(&mut all);
    add::<CredentialList>(&mut all);
    add::<ApiKey>(&mut all);
    add::<ApiKeyCreate>(&mut all);
    add::<ApiKeyUpdate>(&mut all);
    add::<ApiKeyList>(&mut all);
    add::<Me>(&mut all);
    add::<User>(&mut all);
    add::<UserList>(&mut all);
    add::<SshCertificateAuthority>(&mut all);
    add::<SshCertificateAuthorityCreate>(&mut all);
    add::<SshCertificateAuthorityUpdate>(&mut all);
    add::<SshCertificateAuthorityList>(&mut all);
    add::<TunnelSession>(&mut all);
    add::<TunnelSessionList>(&mut all);
    add::<AgentCommandRequest>(&mut all);
    add::<TlsEdge>(&mut all);
    add::<TlsEdgeCreate>(&mut all);
    add::<TlsEdgeUpdate>(&mut all);
    add::<TlsEdgeList>(&mut all);
    add::<TlsEdgeBackend>(&mut all);
    add::<TlsEdgeBackendReplace>(&mut all);
    add::<TunnelGroupBackend>(&mut all);
    add::<TunnelGroupBackendCreate>(&mut all);
    add::<TunnelGroupBackendUpdate>(&mut all);
    add::<TunnelGroupBackendList>(&mut all);
    add::<EventDestination>(&mut all);
    add::<EventDestinationCreate>(&mut all);
    add::<EventDestinationUpdate>(&mut all);
    add::<EventDestinationList>(&mut all);
    add::<DestinationTest>(&mut all);
    add::<EventDeliveryList>(&mut all);
    add::<EventSubscription>(&mut all);
    add::<EventSubscriptionCreate>(&mut all);
    add::<EventSubscriptionUpdate>(&mut all);
    add::<EventSubscriptionList>(&mut all);
    add::<EventSource>(&mut all);
    add::<EventSourceCreate>(&mut all);
    add::<EventSourceUpdate>(&mut all);
    add::<EventSourceList>(&mut all);
    add::<Event>(&mut all);
    add::<EventList>(&mut all);
    all.into_iter()
        .map(|(name, schema)| (name, serde_json::to_value(schema).unwrap_or(Value::Null)))
        .collect()
}
