//! Every request body of the API: the input decoded as each type the server reads, then
//! validated. Nothing panics, and what decodes encodes and decodes back to itself.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde::Serialize;
use serde::de::DeserializeOwned;
use tunnel_core::Validate;
use tunnel_core::resources::{
    api_key, backend, credential, event_destination, event_subscription, ssh_ca, tls_edge,
    tunnel_session,
};

/// `data` read as a `T`: what decodes encodes and decodes back to itself.
fn decoded<T: DeserializeOwned + Serialize + PartialEq + std::fmt::Debug>(
    data: &[u8],
) -> Option<T> {
    let value = serde_json::from_slice::<T>(data).ok()?;
    let again: T = serde_json::from_slice(&serde_json::to_vec(&value).unwrap()).unwrap();
    assert_eq!(again, value);
    Some(value)
}

/// `data` read as a `T`, then validated.
fn body<T: DeserializeOwned + Serialize + Validate + PartialEq + std::fmt::Debug>(data: &[u8]) {
    if let Some(value) = decoded::<T>(data) {
        let _ = value.field_errors();
    }
}

fuzz_target!(|data: &[u8]| {
    body::<credential::CredentialCreate>(data);
    body::<credential::CredentialUpdate>(data);
    body::<api_key::ApiKeyCreate>(data);
    body::<api_key::ApiKeyUpdate>(data);
    body::<ssh_ca::SshCertificateAuthorityCreate>(data);
    body::<ssh_ca::SshCertificateAuthorityUpdate>(data);
    body::<tls_edge::TlsEdgeCreate>(data);
    body::<tls_edge::TlsEdgeUpdate>(data);
    body::<tls_edge::TlsEdgeBackendReplace>(data);
    body::<backend::TunnelGroupBackendCreate>(data);
    body::<backend::TunnelGroupBackendUpdate>(data);
    body::<event_destination::EventDestinationCreate>(data);
    body::<event_destination::EventDestinationUpdate>(data);
    body::<event_subscription::EventSubscriptionCreate>(data);
    body::<event_subscription::EventSubscriptionUpdate>(data);
    body::<event_subscription::EventSourceCreate>(data);
    // Checked by the server against the path alone: decoding is all there is.
    let _ = decoded::<event_subscription::EventSourceUpdate>(data);
    let _ = decoded::<tunnel_session::AgentCommandRequest>(data);
});
