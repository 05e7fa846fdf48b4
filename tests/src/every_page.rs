//! One resource of every kind, made through the API with the texts a test chooses, a real
//! agent's session, and every console route that shows them with the text to wait for: what the
//! accessibility audit, the hostile-text test and the browser-console test walk through.

use crate::api::{Api, id};
use crate::harness::{Agent, Server};
use crate::pages::{self, eventually};
use anyhow::Result;
use fantoccini::Client;
use serde_json::json;
use std::time::Duration;

/// The user-supplied texts the resources are made with.
#[derive(Debug, Clone)]
pub struct Texts {
    /// Starts every description, followed by the resource's kind ("a11y laptop"): what the
    /// routes wait for.
    pub prefix: String,
    /// Ends every description (after the kind); cut, at a character boundary, to the 255 bytes
    /// a description may hold.
    pub tail: String,
    /// Every metadata field, and the agent's.
    pub metadata: String,
    /// The value of the `env` label (the backend's, the credential's rule, the agent's bind).
    pub label: String,
    /// The webhook destination's URL.
    pub url: String,
}

impl Texts {
    /// Plain texts: descriptions `prefix kind`, no metadata, the label `prod`, and a webhook
    /// URL ending in `prefix`.
    pub fn plain(prefix: &str) -> Texts {
        Texts {
            prefix: prefix.to_owned(),
            tail: String::new(),
            metadata: String::new(),
            label: "prod".into(),
            url: format!("https://hooks.example.com/{prefix}"),
        }
    }

    /// The description of a resource of `kind`: `prefix kind tail`, at most 255 bytes.
    pub fn description(&self, kind: &str) -> String {
        let mut text = format!("{} {kind}{}", self.prefix, self.tail);
        let mut end = text.len().min(tunnel_core::limits::OTHER_DESCRIPTION.max);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text
    }

    /// The name of a user: [`Texts::description`] cut to the characters a name may hold.
    pub fn name(&self, kind: &str) -> String {
        let max = tunnel_core::limits::USER_NAME.max;
        self.description(kind).chars().take(max).collect()
    }

    /// What the pages of a resource of `kind` show first: its description's start.
    pub fn marker(&self, kind: &str) -> String {
        format!("{} {kind}", self.prefix)
    }
}

/// The ids of the resources every page is shown with.
#[derive(Debug)]
pub struct Data {
    pub credential: String,
    pub ssh_ca: String,
    pub tls_edge: String,
    pub destination: String,
    pub subscription: String,
    pub api_key: String,
    pub backend: String,
    /// A member of the account named with the texts (made with the operator's command).
    pub user: String,
    pub session: String,
    /// The newest event of the audit log.
    pub event: String,
    /// The agent holding `session`; dropping it ends the session.
    pub agent: Agent,
}

/// Makes one resource of each kind with `texts`, and an agent's session on the credential.
pub async fn create(server: &Server, api: &Api, texts: &Texts) -> Result<Data> {
    let metadata = &texts.metadata;
    let credential = api
        .create(
            "/credentials",
            json!({"description": texts.description("laptop"), "metadata": metadata,
                   "acl": ["bind:*.example.com", format!("bind:env={}", texts.label)]}),
        )
        .await?;
    let ssh_ca = api
        .create(
            "/ssh_certificate_authorities",
            json!({"description": texts.description("ca"), "metadata": metadata}),
        )
        .await?;
    let backend = api
        .create(
            "/backends/tunnel_group",
            json!({"description": texts.description("backend"), "metadata": metadata,
                   "labels": {"env": texts.label}}),
        )
        .await?;
    let edge = api
        .create(
            "/edges/tls",
            json!({"description": texts.description("edge"), "metadata": metadata,
                   "hostports": ["a11y.example.com:443"]}),
        )
        .await?;
    let (status, body) = api
        .call(
            hyper::Method::PUT,
            &format!("/edges/tls/{}/backend", id(&edge)),
            Some(json!({"backend_id": id(&backend)})),
        )
        .await?;
    anyhow::ensure!(status == 200, "the edge's backend module: {status} {body}");
    let destination = api
        .create(
            "/event_destinations",
            json!({"description": texts.description("hooks"), "metadata": metadata,
                   "format": "json", "target": {"webhook": {"url": texts.url}}}),
        )
        .await?;
    let subscription = api
        .create(
            "/event_subscriptions",
            json!({"description": texts.description("subscription"), "metadata": metadata,
                   "sources": [{"type": "credential_created.v0"}],
                   "destination_ids": [id(&destination)]}),
        )
        .await?;
    let api_key = api
        .create(
            "/api_keys",
            json!({"description": texts.description("key"), "metadata": metadata}),
        )
        .await?;
    let (_, me) = api.get("/me").await?;
    let account = me["account_id"].as_str().unwrap_or_default();
    let (user, _) = server.user(account, &texts.name("user"), false)?;
    let token = credential["token"].as_str().unwrap_or_default();
    let label = format!("env={}", texts.label);
    let agent = Agent::start(
        server,
        token,
        &[
            "--bind",
            "app.example.com",
            "--label",
            &label,
            "--metadata",
            metadata,
        ],
    )?;
    let session = api
        .wait_sessions("the agent's session", |ids| ids.into_iter().next())
        .await?;
    let (_, events) = api.get("/events").await?;
    let event = id(&events["events"][0]);
    anyhow::ensure!(!event.is_empty(), "no event in the audit log: {events}");
    Ok(Data {
        credential: id(&credential),
        ssh_ca: id(&ssh_ca),
        tls_edge: id(&edge),
        destination: id(&destination),
        subscription: id(&subscription),
        api_key: id(&api_key),
        backend: id(&backend),
        user,
        session,
        event,
        agent,
    })
}

/// Every route of the signed-in console, each with a text it shows once loaded.
pub fn routes(data: &Data, texts: &Texts) -> Vec<(String, String)> {
    let m = |kind: &str| texts.marker(kind);
    vec![
        ("/credentials".into(), m("laptop")),
        ("/credentials/new".into(), "New credential".into()),
        (
            format!("/credentials/{}", data.credential),
            "ACL tester".into(),
        ),
        ("/ssh-cas".into(), m("ca")),
        (
            "/ssh-cas/new".into(),
            "New SSH certificate authority".into(),
        ),
        (format!("/ssh-cas/{}", data.ssh_ca), m("ca")),
        ("/sessions".into(), data.session.clone()),
        (
            format!("/sessions/{}", data.session),
            "Agent version".into(),
        ),
        ("/tls-edges".into(), m("edge")),
        (format!("/tls-edges/{}", data.tls_edge), m("backend")),
        ("/backends".into(), m("backend")),
        ("/backends/new".into(), "New tunnel-group backend".into()),
        (
            format!("/backends/{}", data.backend),
            "Tunnels online".into(),
        ),
        ("/event-destinations".into(), "hooks.example.com".into()),
        (
            "/event-destinations/new".into(),
            "New event destination".into(),
        ),
        (
            format!("/event-destinations/{}", data.destination),
            "hooks.example.com".into(),
        ),
        ("/event-subscriptions".into(), m("subscription")),
        (
            "/event-subscriptions/new".into(),
            "New event subscription".into(),
        ),
        (
            format!("/event-subscriptions/{}", data.subscription),
            m("subscription"),
        ),
        ("/activity".into(), m("laptop")),
        (format!("/activity/{}", data.event), data.event.clone()),
        ("/api-keys".into(), m("key")),
        ("/api-keys/new".into(), "New API key".into()),
        (format!("/api-keys/{}", data.api_key), m("key")),
        ("/users".into(), m("user")),
        (format!("/users/{}", data.user), m("user")),
    ]
}

/// Waits until the page shows `text`, the loading shell and every loading line are gone, and
/// late content (the names of referenced resources) had a moment to arrive.
pub async fn settle(client: &Client, text: &str) -> Result<()> {
    pages::wait_for_text(client, text).await?;
    eventually("the page loaded", || async {
        let busy = client
            .execute(
                "return !!document.querySelector('#boot, .loading');",
                vec![],
            )
            .await?;
        Ok((busy.as_bool() == Some(false)).then_some(()))
    })
    .await?;
    tokio::time::sleep(Duration::from_millis(300)).await;
    Ok(())
}
