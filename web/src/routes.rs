//! The console's own URLs, in one place (as `tunnel_core::paths` is for the API's), and the
//! title of the page each one shows.
//!
//! Pages link with these functions instead of writing route strings, so a route can change in
//! one place; `title` gives `document.title` for every route, set once by the app shell.

pub const CREDENTIALS: &str = "/credentials";
pub const CREDENTIAL_NEW: &str = "/credentials/new";
pub const SSH_CAS: &str = "/ssh-cas";
pub const SSH_CA_NEW: &str = "/ssh-cas/new";
pub const SESSIONS: &str = "/sessions";
pub const TLS_EDGES: &str = "/tls-edges";
pub const EVENT_SUBSCRIPTIONS: &str = "/event-subscriptions";
pub const EVENT_SUBSCRIPTION_NEW: &str = "/event-subscriptions/new";

pub fn credential(id: &str) -> String {
    format!("{CREDENTIALS}/{id}")
}

pub fn ssh_ca(id: &str) -> String {
    format!("{SSH_CAS}/{id}")
}

pub fn session(id: &str) -> String {
    format!("{SESSIONS}/{id}")
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
    (SESSIONS, "Sessions"),
    (TLS_EDGES, "TLS edges"),
    (EVENT_SUBSCRIPTIONS, "Events"),
];

/// The product name, the last part of every title.
pub const PRODUCT: &str = "Tunnel Console";

/// `document.title` for a console path: what the page shows, then the product, so tabs and
/// history entries can be told apart.
pub fn title(path: &str) -> String {
    let path = path.trim_end_matches('/');
    let mut parts = path.trim_start_matches('/').splitn(2, '/');
    let section = parts.next().unwrap_or("");
    let rest = parts.next();
    let page = match (section, rest) {
        ("credentials", None) => "Credentials".to_owned(),
        ("credentials", Some("new")) => "New credential".to_owned(),
        ("credentials", Some(id)) => format!("Credential {id}"),
        ("ssh-cas", None) => "SSH certificate authorities".to_owned(),
        ("ssh-cas", Some("new")) => "New SSH certificate authority".to_owned(),
        ("ssh-cas", Some(id)) => format!("SSH certificate authority {id}"),
        ("sessions", None) => "Tunnel sessions".to_owned(),
        ("sessions", Some(id)) => format!("Tunnel session {id}"),
        ("tls-edges", None) => "TLS edges".to_owned(),
        ("tls-edges", Some(id)) => format!("TLS edge {id}"),
        ("event-subscriptions", None) => "Event subscriptions".to_owned(),
        ("event-subscriptions", Some("new")) => "New event subscription".to_owned(),
        ("event-subscriptions", Some(id)) => format!("Event subscription {id}"),
        ("", None) => return PRODUCT.to_owned(),
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
            title(&session("ts_1")),
            "Tunnel session ts_1 · Tunnel Console"
        );
        assert_eq!(title("/nowhere"), "Page not found · Tunnel Console");
        let titles: std::collections::BTreeSet<String> =
            SECTIONS.iter().map(|(path, _)| title(path)).collect();
        assert_eq!(titles.len(), SECTIONS.len());
    }
}
