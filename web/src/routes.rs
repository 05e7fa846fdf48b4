//! The console's own URLs, in one place (as `tunnel_core::paths` is for the API's), and the
//! title of the page each one shows.
//!
//! Nothing else in the crate writes a route string: the router (`lib.rs`) matches on the
//! [`segment`]s, pages link with the constants and functions here, so a route changes in one
//! place. `title` gives `document.title` for every route, set once by the app shell. The names
//! follow the API areas (`TUNNEL_SESSIONS`); the URLs themselves are the console's own and stay
//! as users bookmarked them (`/sessions`).

/// The path segments the router matches on; the full paths below are built from the same words
/// (a native test checks that they agree).
pub mod segment {
    pub const CREDENTIALS: &str = "credentials";
    pub const SSH_CAS: &str = "ssh-cas";
    pub const TUNNEL_SESSIONS: &str = "sessions";
    pub const TLS_EDGES: &str = "tls-edges";
    pub const EVENT_SUBSCRIPTIONS: &str = "event-subscriptions";
    /// The create page under a section (`/credentials/new`).
    pub const NEW: &str = "new";
    /// The root of the console (the router's empty path), which redirects to the first
    /// section.
    pub const ROOT: &str = "";
}

/// The name of the route parameter holding a resource id (`/credentials/:id`).
pub const ID_PARAM: &str = "id";

pub const CREDENTIALS: &str = "/credentials";
pub const CREDENTIAL_NEW: &str = "/credentials/new";
pub const SSH_CAS: &str = "/ssh-cas";
pub const SSH_CA_NEW: &str = "/ssh-cas/new";
pub const TUNNEL_SESSIONS: &str = "/sessions";
pub const TLS_EDGES: &str = "/tls-edges";
pub const EVENT_SUBSCRIPTIONS: &str = "/event-subscriptions";
pub const EVENT_SUBSCRIPTION_NEW: &str = "/event-subscriptions/new";

pub fn credential(id: &str) -> String {
    format!("{CREDENTIALS}/{id}")
}

pub fn ssh_ca(id: &str) -> String {
    format!("{SSH_CAS}/{id}")
}

pub fn tunnel_session(id: &str) -> String {
    format!("{TUNNEL_SESSIONS}/{id}")
}

pub fn tls_edge(id: &str) -> String {
    format!("{TLS_EDGES}/{id}")
}

pub fn event_subscription(id: &str) -> String {
    format!("{EVENT_SUBSCRIPTIONS}/{id}")
}

/// The sections of the main navigation: (route, label).
pub const SECTIONS: [(&str, &str); 5] = [
    (CREDENTIALS, "Credentials"),
    (SSH_CAS, "SSH CAs"),
    (TUNNEL_SESSIONS, "Sessions"),
    (TLS_EDGES, "TLS edges"),
    (EVENT_SUBSCRIPTIONS, "Events"),
];

/// The product name, the last part of every title.
pub const PRODUCT: &str = "Tunnel Console";

/// `document.title` for a console path: what the page shows, then the product, so tabs and
/// history entries can be told apart.
pub fn title(path: &str) -> String {
    use segment as s;
    let path = path.trim_end_matches('/');
    let mut parts = path.trim_start_matches('/').splitn(2, '/');
    let section = parts.next().unwrap_or("");
    let rest = parts.next();
    let page = match (section, rest) {
        (s::CREDENTIALS, None) => "Credentials".to_owned(),
        (s::CREDENTIALS, Some(s::NEW)) => "New credential".to_owned(),
        (s::CREDENTIALS, Some(id)) => format!("Credential {id}"),
        (s::SSH_CAS, None) => "SSH certificate authorities".to_owned(),
        (s::SSH_CAS, Some(s::NEW)) => "New SSH certificate authority".to_owned(),
        (s::SSH_CAS, Some(id)) => format!("SSH certificate authority {id}"),
        (s::TUNNEL_SESSIONS, None) => "Tunnel sessions".to_owned(),
        (s::TUNNEL_SESSIONS, Some(id)) => format!("Tunnel session {id}"),
        (s::TLS_EDGES, None) => "TLS edges".to_owned(),
        (s::TLS_EDGES, Some(id)) => format!("TLS edge {id}"),
        (s::EVENT_SUBSCRIPTIONS, None) => "Event subscriptions".to_owned(),
        (s::EVENT_SUBSCRIPTIONS, Some(s::NEW)) => "New event subscription".to_owned(),
        (s::EVENT_SUBSCRIPTIONS, Some(id)) => format!("Event subscription {id}"),
        (s::ROOT, None) => return PRODUCT.to_owned(),
        _ => "Page not found".to_owned(),
    };
    format!("{page} · {PRODUCT}")
}

// Native only: the browser tests are the component tests in `web/tests/`.
#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

    #[test]
    fn every_route_has_its_own_title() {
        assert_eq!(title(CREDENTIALS), "Credentials · Tunnel Console");
        assert_eq!(title("/credentials/"), "Credentials · Tunnel Console");
        assert_eq!(title(CREDENTIAL_NEW), "New credential · Tunnel Console");
        assert_eq!(
            title(&credential("cr_1")),
            "Credential cr_1 · Tunnel Console"
        );
        assert_eq!(
            title(&tunnel_session("ts_1")),
            "Tunnel session ts_1 · Tunnel Console"
        );
        assert_eq!(title("/nowhere"), "Page not found · Tunnel Console");
        let titles: std::collections::BTreeSet<String> =
            SECTIONS.iter().map(|(path, _)| title(path)).collect();
        assert_eq!(titles.len(), SECTIONS.len());
    }

    #[test]
    fn paths_are_made_of_the_segments_the_router_matches() {
        let sections = [
            (CREDENTIALS, segment::CREDENTIALS),
            (SSH_CAS, segment::SSH_CAS),
            (TUNNEL_SESSIONS, segment::TUNNEL_SESSIONS),
            (TLS_EDGES, segment::TLS_EDGES),
            (EVENT_SUBSCRIPTIONS, segment::EVENT_SUBSCRIPTIONS),
        ];
        for (path, segment) in sections {
            assert_eq!(path, format!("/{segment}"));
        }
        for (new, section) in [
            (CREDENTIAL_NEW, CREDENTIALS),
            (SSH_CA_NEW, SSH_CAS),
            (EVENT_SUBSCRIPTION_NEW, EVENT_SUBSCRIPTIONS),
        ] {
            assert_eq!(new, format!("{section}/{}", segment::NEW));
        }
    }
}
