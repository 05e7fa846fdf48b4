//! Endpoint paths of the API, relative to `{base_url}` (which ends in `/api`). The server builds
//! its routes and every `uri` from these, and the console its requests. Joined with `concat`,
//! not `format!`: each row of a list page has its `uri` built here.

pub const API_PREFIX: &str = "/api";
/// The agent channel (WebSocket), outside the API prefix.
pub const AGENT_CONNECT: &str = "/agent/v1/connect";
/// Header every API request carries, and its only supported value.
pub const VERSION_HEADER: &str = "Service-Version";
/// The name the official ngrok client libraries give the same header; taken in its place when
/// `Service-Version` is absent (the Python library cannot be given another header).
pub const OFFICIAL_VERSION_HEADER: &str = "Ngrok-Version";
pub const SUPPORTED_VERSION: &str = "2";
/// Header carrying the operation id of every response.
pub const OPERATION_ID_HEADER: &str = "Operation-Id";

pub const CREDENTIALS: &str = "/credentials";
pub const SSH_CERTIFICATE_AUTHORITIES: &str = "/ssh_certificate_authorities";
pub const TUNNEL_SESSIONS: &str = "/tunnel_sessions";
pub const TLS_EDGES: &str = "/edges/tls";
pub const TUNNEL_GROUP_BACKENDS: &str = "/backends/tunnel_group";
pub const EVENT_DESTINATIONS: &str = "/event_destinations";
pub const EVENT_SUBSCRIPTIONS: &str = "/event_subscriptions";
/// API keys (an extension, as ngrok's).
pub const API_KEYS: &str = "/api_keys";
/// Who the request's API key acts as (an extension).
pub const ME: &str = "/me";
/// The users and bots of the account (an extension).
pub const USERS: &str = "/users";
/// The audit log (an extension).
pub const EVENTS: &str = "/events";

/// The API's collections: every path the API answers (but `/me`) begins with one, and each
/// is a list.
pub const COLLECTIONS: [&str; 10] = [
    API_KEYS,
    USERS,
    CREDENTIALS,
    SSH_CERTIFICATE_AUTHORITIES,
    TUNNEL_SESSIONS,
    TLS_EDGES,
    TUNNEL_GROUP_BACKENDS,
    EVENT_DESTINATIONS,
    EVENT_SUBSCRIPTIONS,
    EVENTS,
];

pub fn credential(id: &str) -> String {
    [CREDENTIALS, "/", id].concat()
}

pub fn user(id: &str) -> String {
    [USERS, "/", id].concat()
}

pub fn api_key(id: &str) -> String {
    [API_KEYS, "/", id].concat()
}

pub fn ssh_certificate_authority(id: &str) -> String {
    [SSH_CERTIFICATE_AUTHORITIES, "/", id].concat()
}

pub fn tunnel_session(id: &str) -> String {
    [TUNNEL_SESSIONS, "/", id].concat()
}

pub fn tunnel_session_command(
    id: &str,
    command: crate::resources::tunnel_session::AgentCommand,
) -> String {
    format!("{TUNNEL_SESSIONS}/{id}/{}", command.as_str())
}

pub fn tls_edge(id: &str) -> String {
    [TLS_EDGES, "/", id].concat()
}

pub fn tls_edge_backend(edge_id: &str) -> String {
    [TLS_EDGES, "/", edge_id, "/backend"].concat()
}

pub fn tunnel_group_backend(id: &str) -> String {
    [TUNNEL_GROUP_BACKENDS, "/", id].concat()
}

pub fn event_destination(id: &str) -> String {
    [EVENT_DESTINATIONS, "/", id].concat()
}

/// `POST`: a new signing secret, answered once (the old one keeps signing for a day).
pub fn event_destination_rotate_secret(id: &str) -> String {
    [EVENT_DESTINATIONS, "/", id, "/rotate_secret"].concat()
}

/// `POST`: sends a `ping.v0` event at once and answers the attempt.
pub fn event_destination_test(id: &str) -> String {
    [EVENT_DESTINATIONS, "/", id, "/test"].concat()
}

/// `GET`: the destination's deliveries, newest first, with their attempts.
pub fn event_destination_deliveries(id: &str) -> String {
    [EVENT_DESTINATIONS, "/", id, "/deliveries"].concat()
}

pub fn event(id: &str) -> String {
    [EVENTS, "/", id].concat()
}

pub fn event_subscription(id: &str) -> String {
    [EVENT_SUBSCRIPTIONS, "/", id].concat()
}

pub fn event_sources(subscription_id: &str) -> String {
    [EVENT_SUBSCRIPTIONS, "/", subscription_id, "/sources"].concat()
}

pub fn event_source(subscription_id: &str, event_type: &str) -> String {
    [
        EVENT_SUBSCRIPTIONS,
        "/",
        subscription_id,
        "/sources/",
        event_type,
    ]
    .concat()
}

/// Query of a list page: `limit` and `before_id` (`docs/api/README.md`, "Lists").
pub fn list_query(limit: Option<u32>, before_id: Option<&str>) -> String {
    let mut parts = Vec::new();
    if let Some(limit) = limit {
        parts.push(format!("limit={limit}"));
    }
    if let Some(before) = before_id {
        parts.push(format!("before_id={before}"));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!("?{}", parts.join("&"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_case;

    #[test_case]
    fn paths() {
        assert_eq!(
            tunnel_group_backend("bkdtg_1"),
            "/backends/tunnel_group/bkdtg_1"
        );
        assert_eq!(
            event_source("esb_1", "a.v0"),
            "/event_subscriptions/esb_1/sources/a.v0"
        );
        assert_eq!(
            list_query(Some(10), Some("cr_1")),
            "?limit=10&before_id=cr_1"
        );
        assert_eq!(list_query(None, None), "");
    }
}
