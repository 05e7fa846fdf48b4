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
    pub const BACKENDS: &str = "backends";
    pub const EVENT_SUBSCRIPTIONS: &str = "event-subscriptions";
    pub const EVENT_DESTINATIONS: &str = "event-destinations";
    pub const ACTIVITY: &str = "activity";
    pub const API_KEYS: &str = "api-keys";
    pub const USERS: &str = "users";
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
/// Tunnel-group backends (the only kind of backend).
pub const BACKENDS: &str = "/backends";
pub const BACKEND_NEW: &str = "/backends/new";
pub const EVENT_SUBSCRIPTIONS: &str = "/event-subscriptions";
pub const EVENT_SUBSCRIPTION_NEW: &str = "/event-subscriptions/new";
pub const EVENT_DESTINATIONS: &str = "/event-destinations";
pub const EVENT_DESTINATION_NEW: &str = "/event-destinations/new";
/// The audit log; its filters are the query (`activity_filtered`).
pub const ACTIVITY: &str = "/activity";
pub const API_KEYS: &str = "/api-keys";
pub const API_KEY_NEW: &str = "/api-keys/new";
/// The users and bots of the account (read-only).
pub const USERS: &str = "/users";

pub fn user(id: &str) -> String {
    format!("{USERS}/{id}")
}

pub fn api_key(id: &str) -> String {
    format!("{API_KEYS}/{id}")
}

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

pub fn backend(id: &str) -> String {
    format!("{BACKENDS}/{id}")
}

pub fn event_subscription(id: &str) -> String {
    format!("{EVENT_SUBSCRIPTIONS}/{id}")
}

pub fn event_destination(id: &str) -> String {
    format!("{EVENT_DESTINATIONS}/{id}")
}

/// One event of the audit log.
pub fn activity_event(id: &str) -> String {
    format!("{ACTIVITY}/{id}")
}

/// The Activity page with `filters` (pairs named as the API's `EVENT_FILTERS`, whose names the
/// console's query reuses, so a shared link and the API request say the same). Empty values
/// are left out.
pub fn activity_filtered(filters: &[(&str, &str)]) -> String {
    let query = query_string(filters);
    if query.is_empty() {
        ACTIVITY.to_owned()
    } else {
        format!("{ACTIVITY}?{query}")
    }
}

/// The Activity page showing only the events of the object `object_id`.
pub fn activity_of(object_id: &str) -> String {
    activity_filtered(&[("object_id", object_id)])
}

/// `name=value&…` with the values percent-encoded (times carry `:` and `+`); empty values are
/// left out.
pub fn query_string(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| format!("{k}={}", encode(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// Percent-encoding of a query value: everything but unreserved characters. Small enough to
/// keep the `url` crates out of the WASM.
fn encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A path segment as the router gives it to the page (`decodeURIComponent`): `%XX` sequences
/// decoded, the segment unchanged when they do not make UTF-8 text, as the browser leaves it.
fn decode(segment: &str) -> String {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| segment.to_owned())
}

/// The console page of the resource with id `id`, when the console has one (by its prefix): the
/// Activity page links the objects and actors of events with it.
pub fn for_id(id: &str) -> Option<String> {
    use tunnel_core::ids::IdKind;
    let route = match IdKind::of(id)? {
        IdKind::Credential => credential(id),
        IdKind::SshCertificateAuthority => ssh_ca(id),
        IdKind::TunnelSession => tunnel_session(id),
        IdKind::TlsEdge => tls_edge(id),
        IdKind::TunnelGroupBackend => backend(id),
        IdKind::EventDestination => event_destination(id),
        IdKind::EventSubscription => event_subscription(id),
        IdKind::Event => activity_event(id),
        IdKind::ApiKey => api_key(id),
        IdKind::User | IdKind::Bot => user(id),
        _ => return None,
    };
    Some(route)
}

/// The sections of the main navigation: (route, label).
pub const SECTIONS: [(&str, &str); 10] = [
    (CREDENTIALS, "Credentials"),
    (SSH_CAS, "SSH CAs"),
    (TUNNEL_SESSIONS, "Sessions"),
    (TLS_EDGES, "TLS edges"),
    (BACKENDS, "Backends"),
    (EVENT_SUBSCRIPTIONS, "Events"),
    (EVENT_DESTINATIONS, "Destinations"),
    (ACTIVITY, "Activity"),
    (API_KEYS, "API keys"),
    (USERS, "Users"),
];

/// What the top bar's link to `section` says to screen readers on `path`: `page` on the
/// section's list itself, `true` ("the current item") on a page inside it (a detail page, a
/// form), nothing elsewhere. The visual highlight follows both.
pub fn section_current(section: &str, path: &str) -> Option<&'static str> {
    let path = path.trim_end_matches('/');
    match path.strip_prefix(section) {
        Some("") => Some("page"),
        Some(rest) if rest.starts_with('/') => Some("true"),
        _ => None,
    }
}

/// The product name, the last part of every title.
pub const PRODUCT: &str = "Tunnel Console";

/// `document.title` for a console path: what the page shows, then the product, so tabs and
/// history entries can be told apart.
pub fn title(path: &str) -> String {
    match heading(path) {
        Some(page) => format!("{page} · {PRODUCT}"),
        None => PRODUCT.to_owned(),
    }
}

/// What a console path's page is, in words (`Credential cr_…`); `None` at the root.
pub fn heading(path: &str) -> Option<String> {
    use segment as s;
    let path = path.split('?').next().unwrap_or(path).trim_end_matches('/');
    let mut parts = path.trim_start_matches('/').splitn(2, '/');
    let section = parts.next().unwrap_or("");
    // No route has more than two segments: what the router shows as not found.
    if parts.clone().next().is_some_and(|rest| rest.contains('/')) {
        return Some("Page not found".to_owned());
    }
    // The id as the page shows it (`%3C` is `<`).
    let rest = parts.next().map(decode);
    let page = match (section, rest.as_deref()) {
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
        (s::BACKENDS, None) => "Tunnel-group backends".to_owned(),
        (s::BACKENDS, Some(s::NEW)) => "New tunnel-group backend".to_owned(),
        (s::BACKENDS, Some(id)) => format!("Tunnel-group backend {id}"),
        (s::EVENT_SUBSCRIPTIONS, None) => "Event subscriptions".to_owned(),
        (s::EVENT_SUBSCRIPTIONS, Some(s::NEW)) => "New event subscription".to_owned(),
        (s::EVENT_SUBSCRIPTIONS, Some(id)) => format!("Event subscription {id}"),
        (s::EVENT_DESTINATIONS, None) => "Event destinations".to_owned(),
        (s::EVENT_DESTINATIONS, Some(s::NEW)) => "New event destination".to_owned(),
        (s::EVENT_DESTINATIONS, Some(id)) => format!("Event destination {id}"),
        (s::ACTIVITY, None) => "Activity".to_owned(),
        (s::ACTIVITY, Some(id)) => format!("Event {id}"),
        (s::API_KEYS, None) => "API keys".to_owned(),
        (s::API_KEYS, Some(s::NEW)) => "New API key".to_owned(),
        (s::API_KEYS, Some(id)) => format!("API key {id}"),
        (s::USERS, None) => "Users".to_owned(),
        (s::USERS, Some(id)) if id.starts_with("bot_") => format!("Bot {id}"),
        (s::USERS, Some(id)) => format!("User {id}"),
        (s::ROOT, None) => return None,
        _ => "Page not found".to_owned(),
    };
    Some(page)
}

// Native only: the browser tests are the component tests in `web/tests/`.
#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

    #[test]
    fn every_route_has_its_own_title() {
        assert_eq!(
            title("/credentials/new/extra"),
            "Page not found · Tunnel Console"
        );
        assert_eq!(title("/users/bot_1"), "Bot bot_1 · Tunnel Console");
        // The id as the page shows it, decoded as the router decodes it.
        assert_eq!(
            title("/credentials/cr_%3Cb%3E%20%C3%BC"),
            "Credential cr_<b> ü · Tunnel Console"
        );
        assert_eq!(
            title("/credentials/%FF%"),
            "Credential %FF% · Tunnel Console"
        );
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
        assert_eq!(
            title(&activity_event("ev_1")),
            "Event ev_1 · Tunnel Console"
        );
        assert_eq!(title("/activity?type=a.v0"), "Activity · Tunnel Console");
        let titles: std::collections::BTreeSet<String> =
            SECTIONS.iter().map(|(path, _)| title(path)).collect();
        assert_eq!(titles.len(), SECTIONS.len());
    }

    #[test]
    fn a_section_link_is_the_page_only_on_the_section_list() {
        assert_eq!(section_current(CREDENTIALS, CREDENTIALS), Some("page"));
        assert_eq!(section_current(CREDENTIALS, "/credentials/"), Some("page"));
        assert_eq!(
            section_current(CREDENTIALS, &credential("cr_1")),
            Some("true")
        );
        assert_eq!(section_current(CREDENTIALS, CREDENTIAL_NEW), Some("true"));
        // A section whose name begins another's is not it.
        assert_eq!(
            section_current(EVENT_SUBSCRIPTIONS, "/event-subscriptionsx"),
            None
        );
        assert_eq!(section_current(CREDENTIALS, SSH_CAS), None);
    }

    #[test]
    fn paths_are_made_of_the_segments_the_router_matches() {
        let sections = [
            (CREDENTIALS, segment::CREDENTIALS),
            (SSH_CAS, segment::SSH_CAS),
            (TUNNEL_SESSIONS, segment::TUNNEL_SESSIONS),
            (TLS_EDGES, segment::TLS_EDGES),
            (BACKENDS, segment::BACKENDS),
            (EVENT_SUBSCRIPTIONS, segment::EVENT_SUBSCRIPTIONS),
            (EVENT_DESTINATIONS, segment::EVENT_DESTINATIONS),
            (ACTIVITY, segment::ACTIVITY),
            (API_KEYS, segment::API_KEYS),
            (USERS, segment::USERS),
        ];
        for (path, segment) in sections {
            assert_eq!(path, format!("/{segment}"));
        }
        for (new, section) in [
            (CREDENTIAL_NEW, CREDENTIALS),
            (SSH_CA_NEW, SSH_CAS),
            (EVENT_SUBSCRIPTION_NEW, EVENT_SUBSCRIPTIONS),
            (EVENT_DESTINATION_NEW, EVENT_DESTINATIONS),
            (API_KEY_NEW, API_KEYS),
            (BACKEND_NEW, BACKENDS),
        ] {
            assert_eq!(new, format!("{section}/{}", segment::NEW));
        }
    }

    #[test]
    fn activity_links_carry_their_filters_encoded() {
        assert_eq!(
            activity_filtered(&[("type", ""), ("object_id", "")]),
            ACTIVITY
        );
        assert_eq!(activity_of("cr_1"), "/activity?object_id=cr_1");
        assert_eq!(
            activity_filtered(&[
                ("type", "credential_created.v0"),
                ("after", "2026-11-22T09:30:00+01:00")
            ]),
            "/activity?type=credential_created.v0&after=2026-11-22T09%3A30%3A00%2B01%3A00"
        );
    }

    #[test]
    fn ids_link_to_their_pages() {
        assert_eq!(for_id("cr_1").as_deref(), Some("/credentials/cr_1"));
        assert_eq!(for_id("ed_1").as_deref(), Some("/event-destinations/ed_1"));
        assert_eq!(for_id("ak_1").as_deref(), Some("/api-keys/ak_1"));
        assert_eq!(for_id("bkdtg_1").as_deref(), Some("/backends/bkdtg_1"));
        assert_eq!(for_id("usr_1").as_deref(), Some("/users/usr_1"));
        assert_eq!(for_id("bot_1").as_deref(), Some("/users/bot_1"));
        assert_eq!(for_id("acct_1"), None);
        assert_eq!(for_id("nothing"), None);
    }
}
