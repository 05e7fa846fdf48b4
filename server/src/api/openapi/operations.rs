//! The table of the API's operations, the error codes particular to some, and the extension
//! properties the document marks: data, one row per operation, kept apart from the code that
//! turns it into the document.

use tunnel_core::{ErrorCode, paths};

/// One operation of the API.
#[derive(Debug, Clone, Copy)]
pub struct Operation {
    pub method: &'static str,
    /// Path under `{base_url}`, with `{id}`-style parameters.
    pub path: &'static str,
    pub operation_id: &'static str,
    pub summary: &'static str,
    pub tag: &'static str,
    pub request: Option<&'static str>,
    pub status: u16,
    pub response: Option<&'static str>,
}

// One row of the table below: positional on purpose, so the table reads as a table.
#[allow(clippy::too_many_arguments)]
const fn op(
    method: &'static str,
    path: &'static str,
    operation_id: &'static str,
    summary: &'static str,
    tag: &'static str,
    request: Option<&'static str>,
    status: u16,
    response: Option<&'static str>,
) -> Operation {
    Operation {
        method,
        path,
        operation_id,
        summary,
        tag,
        request,
        status,
        response,
    }
}

const CRED: &str = "/credentials/{id}";
const KEY: &str = "/api_keys/{id}";
const SSHCA: &str = "/ssh_certificate_authorities/{id}";
const TS: &str = "/tunnel_sessions/{id}";
const TS_RESTART: &str = "/tunnel_sessions/{id}/restart";
const TS_STOP: &str = "/tunnel_sessions/{id}/stop";
const TS_UPDATE: &str = "/tunnel_sessions/{id}/update";
const USER: &str = "/users/{id}";
const EDGE: &str = "/edges/tls/{id}";
const EDGE_BACKEND: &str = "/edges/tls/{id}/backend";
const BACKEND: &str = "/backends/tunnel_group/{id}";
const DEST: &str = "/event_destinations/{id}";
const DEST_ROTATE: &str = "/event_destinations/{id}/rotate_secret";
const DEST_TEST: &str = "/event_destinations/{id}/test";
const DEST_DELIVERIES: &str = "/event_destinations/{id}/deliveries";
const SUB: &str = "/event_subscriptions/{id}";
const SOURCES: &str = "/event_subscriptions/{id}/sources";
const SOURCE: &str = "/event_subscriptions/{id}/sources/{event_type}";
const EVENT: &str = "/events/{id}";

/// Every operation of the API. One row each, so kept out of rustfmt's reach.
#[rustfmt::skip]
pub const OPERATIONS: &[Operation] = &[
    op("post", paths::CREDENTIALS, "createCredential", "Create Tunnel Credential (the only response with the token)", "Credentials", Some("CredentialCreate"), 201, Some("Credential")),
    op("get", paths::CREDENTIALS, "listCredentials", "List Tunnel Credentials", "Credentials", None, 200, Some("CredentialList")),
    op("get", CRED, "getCredential", "Get Tunnel Credential", "Credentials", None, 200, Some("Credential")),
    op("patch", CRED, "updateCredential", "Update Tunnel Credential", "Credentials", Some("CredentialUpdate"), 200, Some("Credential")),
    op("delete", CRED, "deleteCredential", "Delete Tunnel Credential (disconnects its sessions)", "Credentials", None, 204, None),
    op("post", paths::API_KEYS, "createApiKey", "Create API Key (an extension; the only response with the key)", "API keys", Some("ApiKeyCreate"), 201, Some("ApiKey")),
    op("get", paths::API_KEYS, "listApiKeys", "List API Keys (an extension; a member's own, every key of the account for an admin)", "API keys", None, 200, Some("ApiKeyList")),
    op("get", KEY, "getApiKey", "Get API Key", "API keys", None, 200, Some("ApiKey")),
    op("patch", KEY, "updateApiKey", "Update API Key", "API keys", Some("ApiKeyUpdate"), 200, Some("ApiKey")),
    op("delete", KEY, "deleteApiKey", "Delete API Key (revoked at once)", "API keys", None, 204, None),
    op("get", paths::USERS, "listUsers", "List Users (an extension: the account's users, then its bots, newest first)", "Users", None, 200, Some("UserList")),
    op("get", USER, "getUser", "Get User (an extension: a user or bot of the account)", "Users", None, 200, Some("User")),
    op("get", paths::ME, "getMe", "Get the caller (an extension: the user or bot of the API key, its account, admin flag)", "API keys", None, 200, Some("Me")),
    op("post", paths::SSH_CERTIFICATE_AUTHORITIES, "createSshCertificateAuthority", "Create SSH Certificate Authority", "SSH certificate authorities", Some("SshCertificateAuthorityCreate"), 201, Some("SshCertificateAuthority")),
    op("get", paths::SSH_CERTIFICATE_AUTHORITIES, "listSshCertificateAuthorities", "List SSH Certificate Authorities", "SSH certificate authorities", None, 200, Some("SshCertificateAuthorityList")),
    op("get", SSHCA, "getSshCertificateAuthority", "Get SSH Certificate Authority", "SSH certificate authorities", None, 200, Some("SshCertificateAuthority")),
    op("patch", SSHCA, "updateSshCertificateAuthority", "Update SSH Certificate Authority", "SSH certificate authorities", Some("SshCertificateAuthorityUpdate"), 200, Some("SshCertificateAuthority")),
    op("delete", SSHCA, "deleteSshCertificateAuthority", "Delete SSH Certificate Authority", "SSH certificate authorities", None, 204, None),
    op("get", paths::TUNNEL_SESSIONS, "listTunnelSessions", "List Tunnel Sessions (online only)", "Tunnel sessions", None, 200, Some("TunnelSessionList")),
    op("get", TS, "getTunnelSession", "Get Tunnel Session", "Tunnel sessions", None, 200, Some("TunnelSession")),
    op("post", TS_RESTART, "restartTunnelAgent", "Restart Tunnel Agent (409 on Windows; it reconnects under a new session id)", "Tunnel sessions", Some("AgentCommandRequest"), 204, None),
    op("post", TS_STOP, "stopTunnelAgent", "Stop Tunnel Agent", "Tunnel sessions", Some("AgentCommandRequest"), 204, None),
    op("post", TS_UPDATE, "updateTunnelAgent", "Update Tunnel Agent (never across a major version; 409 with a distinct code per refusal)", "Tunnel sessions", Some("AgentCommandRequest"), 204, None),
    op("post", paths::TLS_EDGES, "createTlsEdge", "Create TLS Edge", "TLS edges", Some("TlsEdgeCreate"), 201, Some("TlsEdge")),
    op("get", paths::TLS_EDGES, "listTlsEdges", "List TLS Edges", "TLS edges", None, 200, Some("TlsEdgeList")),
    op("get", EDGE, "getTlsEdge", "Get TLS Edge", "TLS edges", None, 200, Some("TlsEdge")),
    op("patch", EDGE, "updateTlsEdge", "Update TLS Edge (hostports replaced as a whole; the backend module only through its own routes)", "TLS edges", Some("TlsEdgeUpdate"), 200, Some("TlsEdge")),
    op("delete", EDGE, "deleteTlsEdge", "Delete TLS Edge", "TLS edges", None, 204, None),
    op("put", EDGE_BACKEND, "replaceTlsEdgeBackend", "Replace TLS Edge Backend Module", "TLS edges", Some("TlsEdgeBackendReplace"), 200, Some("TlsEdgeBackend")),
    op("get", EDGE_BACKEND, "getTlsEdgeBackend", "Get TLS Edge Backend Module", "TLS edges", None, 200, Some("TlsEdgeBackend")),
    op("delete", EDGE_BACKEND, "deleteTlsEdgeBackend", "Delete TLS Edge Backend Module", "TLS edges", None, 204, None),
    op("post", paths::TUNNEL_GROUP_BACKENDS, "createTunnelGroupBackend", "Create Tunnel-Group Backend", "Backends", Some("TunnelGroupBackendCreate"), 201, Some("TunnelGroupBackend")),
    op("get", paths::TUNNEL_GROUP_BACKENDS, "listTunnelGroupBackends", "List Tunnel-Group Backends", "Backends", None, 200, Some("TunnelGroupBackendList")),
    op("get", BACKEND, "getTunnelGroupBackend", "Get Tunnel-Group Backend", "Backends", None, 200, Some("TunnelGroupBackend")),
    op("patch", BACKEND, "updateTunnelGroupBackend", "Update Tunnel-Group Backend (labels replaced as a whole)", "Backends", Some("TunnelGroupBackendUpdate"), 200, Some("TunnelGroupBackend")),
    op("delete", BACKEND, "deleteTunnelGroupBackend", "Delete Tunnel-Group Backend (409 while a TLS edge uses it)", "Backends", None, 204, None),
    op("post", paths::EVENT_DESTINATIONS, "createEventDestination", "Create Event Destination", "Event destinations", Some("EventDestinationCreate"), 201, Some("EventDestination")),
    op("get", paths::EVENT_DESTINATIONS, "listEventDestinations", "List Event Destinations", "Event destinations", None, 200, Some("EventDestinationList")),
    op("get", DEST, "getEventDestination", "Get Event Destination", "Event destinations", None, 200, Some("EventDestination")),
    op("patch", DEST, "updateEventDestination", "Update Event Destination (a new target URL is checked again)", "Event destinations", Some("EventDestinationUpdate"), 200, Some("EventDestination")),
    op("delete", DEST, "deleteEventDestination", "Delete Event Destination (409 while a subscription uses it)", "Event destinations", None, 204, None),
    op("post", DEST_ROTATE, "rotateEventDestinationSecret", "Rotate Event Destination Signing Secret (the only response with the new secret; the previous one signs for 24 h more)", "Event destinations", None, 200, Some("EventDestination")),
    op("post", DEST_TEST, "testEventDestination", "Test Event Destination (sends one ping.v0 now; not stored)", "Event destinations", None, 200, Some("DestinationTest")),
    op("get", DEST_DELIVERIES, "listEventDeliveries", "List Event Deliveries of a Destination (with their attempts)", "Event destinations", None, 200, Some("EventDeliveryList")),
    op("post", paths::EVENT_SUBSCRIPTIONS, "createEventSubscription", "Create Event Subscription", "Event subscriptions", Some("EventSubscriptionCreate"), 201, Some("EventSubscription")),
    op("get", paths::EVENT_SUBSCRIPTIONS, "listEventSubscriptions", "List Event Subscriptions", "Event subscriptions", None, 200, Some("EventSubscriptionList")),
    op("get", SUB, "getEventSubscription", "Get Event Subscription", "Event subscriptions", None, 200, Some("EventSubscription")),
    op("patch", SUB, "updateEventSubscription", "Update Event Subscription", "Event subscriptions", Some("EventSubscriptionUpdate"), 200, Some("EventSubscription")),
    op("delete", SUB, "deleteEventSubscription", "Delete Event Subscription", "Event subscriptions", None, 204, None),
    op("get", SOURCE, "getEventSource", "Get Event Subscription Source", "Event subscriptions", None, 200, Some("EventSource")),
    op("post", SOURCES, "createEventSource", "Add Event Subscription Source", "Event subscriptions", Some("EventSourceCreate"), 201, Some("EventSource")),
    op("get", SOURCES, "listEventSources", "List Event Subscription Sources", "Event subscriptions", None, 200, Some("EventSourceList")),
    op("patch", SOURCE, "updateEventSource", "Update Event Subscription Source (nothing to change but its identity)", "Event subscriptions", Some("EventSourceUpdate"), 200, Some("EventSource")),
    op("delete", SOURCE, "deleteEventSource", "Remove Event Subscription Source", "Event subscriptions", None, 204, None),
    op("get", paths::EVENTS, "listEvents", "List Events (the audit log; an extension; filters type, object_id, actor_id, after, before)", "Events", None, 200, Some("EventList")),
    op("get", EVENT, "getEvent", "Get Event (an extension)", "Events", None, 200, Some("Event")),
];

/// The error codes particular to an operation, beyond those its shape brings (an id, a body,
/// a list's query; see `error_codes` in the module above).
#[rustfmt::skip]
pub const OWN_ERRORS: &[(&str, &[ErrorCode])] = &[
    ("createCredential", &[ErrorCode::OwnerForbidden, ErrorCode::UnknownOwner]),
    ("createApiKey", &[ErrorCode::OwnerForbidden, ErrorCode::UnknownOwner]),
    ("createSshCertificateAuthority", &[ErrorCode::KeyGenerationBusy]),
    ("restartTunnelAgent", &[ErrorCode::RestartUnsupported, ErrorCode::RestartDuringUpdate, ErrorCode::RestartTooSoon, ErrorCode::AgentTimeout]),
    ("stopTunnelAgent", &[ErrorCode::AgentTimeout]),
    ("updateTunnelAgent", &[ErrorCode::NoUpdateAvailable, ErrorCode::UpdateChecksDisabled, ErrorCode::UpdateInProgress, ErrorCode::UpdatedNotRestarted, ErrorCode::AgentTimeout]),
    ("createTlsEdge", &[ErrorCode::ReferenceNotFound]),
    ("replaceTlsEdgeBackend", &[ErrorCode::ReferenceNotFound]),
    ("deleteTunnelGroupBackend", &[ErrorCode::InUse]),
    ("createEventDestination", &[ErrorCode::WebhookAddressRefused]),
    ("updateEventDestination", &[ErrorCode::WebhookAddressRefused]),
    ("deleteEventDestination", &[ErrorCode::InUse]),
    // No input, but a body may be sent (`{}`, as clients do), and is read as any body is.
    ("rotateEventDestinationSecret", &[ErrorCode::MalformedJson, ErrorCode::UnknownField, ErrorCode::BodyTooLarge, ErrorCode::UnsupportedMediaType]),
    ("testEventDestination", &[ErrorCode::MalformedJson, ErrorCode::UnknownField, ErrorCode::BodyTooLarge, ErrorCode::UnsupportedMediaType]),
    ("createEventSubscription", &[ErrorCode::ReferenceNotFound]),
    ("updateEventSubscription", &[ErrorCode::ReferenceNotFound]),
];

/// [`OWN_ERRORS`] of one operation.
pub fn own_errors(operation_id: &str) -> &'static [ErrorCode] {
    OWN_ERRORS
        .iter()
        .find(|(id, _)| *id == operation_id)
        .map_or(&[], |(_, codes)| codes)
}

/// Properties beyond the spec (docs/api/README.md, extensions): (schema, property, description). Each is marked
/// with `x-extension: true` and described, so a client can tell them from the spec's fields.
pub const EXTENSIONS: &[(&str, &str, &str)] = &[
    (
        "TunnelSession",
        "agent_update_target",
        "Extension. The version an update of this session would move the agent to: the newest \
         release of its major version known to the server, if newer than agent_version. null when \
         there is none (up to date) or when the agent disabled update checks.",
    ),
    (
        "TunnelSession",
        "agent_update_checks",
        "Extension. Whether the agent accepts updates (false for an agent started with \
         --no-update-check, which refuses every update).",
    ),
    (
        "TunnelSession",
        "agent_update_state",
        "Extension. Where the agent is in an update, as it reported it: null (no update in this \
         agent process), {\"state\": \"updating\", \"target\"} while the update is applied, or \
         {\"state\": \"updated\", \"version\", \"restart_available_in_secs\"} once it finished: \
         restart is refused (409) while updating and until restart_available_in_secs (counted at \
         the time of the response) reaches 0.",
    ),
];
