//! Account isolation and what admins alone may do, as a property (docs/accounts.md): random
//! interleaved operations (create, get, update, delete, list) on credentials, SSH CAs, TLS
//! edges, backends, API keys, event destinations and subscriptions, and tunnel sessions (opened
//! as an agent's would be, on a credential of either account), by an admin and a member of each
//! of two accounts, each checked against a model of who may see what. Nothing of one account is
//! ever visible to, changed by or counted for the other; a subscription can name only its own
//! account's destinations, and a destination one uses cannot be deleted; deleting a credential
//! ends its sessions; a member reaches only their own API keys and cannot make a credential for
//! someone else; the audit log of each account names only its own resources. Seeded, so a
//! failure names its seed and replays. The users and bots, which the API only reads, are
//! checked apart: each account lists and reads only its own.

use crate::common::TestApp;
use crate::support::session;
use rand::rngs::StdRng;
use rand::{Rng as _, SeedableRng as _};
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// An area exercised: its path, its list's field, the body of a create through the API (none
/// for sessions, which agents open), and whether it takes PATCH and DELETE.
struct Area {
    path: &'static str,
    field: &'static str,
    create: Option<fn() -> Value>,
    writable: bool,
}

const fn area(path: &'static str, field: &'static str, create: fn() -> Value) -> Area {
    Area {
        path,
        field,
        create: Some(create),
        writable: true,
    }
}

const AREAS: [Area; 8] = [
    area("/credentials", "credentials", || json!({})),
    area(
        "/ssh_certificate_authorities",
        "ssh_certificate_authorities",
        || json!({}),
    ),
    area("/edges/tls", "tls_edges", || json!({"hostports": []})),
    area(
        "/backends/tunnel_group",
        "backends",
        || json!({"labels": {"app": "web"}}),
    ),
    area("/api_keys", "keys", || json!({})),
    area(
        "/event_destinations",
        "event_destinations",
        || json!({"target": {"webhook": {"url": "https://example.com/hook"}}}),
    ),
    area("/event_subscriptions", "event_subscriptions", || json!({})),
    Area {
        path: "/tunnel_sessions",
        field: "tunnel_sessions",
        create: None,
        writable: false,
    },
];
const CREDENTIALS: usize = 0;
const API_KEYS: usize = 4;
const DESTINATIONS: usize = 5;
const SUBSCRIPTIONS: usize = 6;
const SESSIONS: usize = 7;

/// Runs per seed and operations per run.
const SEEDS: u64 = 6;
const STEPS: usize = 120;

/// Someone calling the API.
struct Actor {
    account: usize,
    principal: String,
    key: String,
    admin: bool,
}

/// What the model knows of a resource made by the run.
struct Made {
    area: usize,
    account: usize,
    owner: String,
    description: String,
    alive: bool,
    /// A session's credential.
    credential: Option<String>,
    /// The destinations a subscription names.
    uses: Vec<String>,
}

impl Made {
    fn new(area: usize, account: usize, owner: String, description: String) -> Made {
        Made {
            area,
            account,
            owner,
            description,
            alive: true,
            credential: None,
            uses: Vec::new(),
        }
    }
}

impl Made {
    /// Whether `actor` reaches it: the same account, and for an API key an admin or its owner.
    fn reachable_by(&self, actor: &Actor) -> bool {
        self.alive
            && self.account == actor.account
            && (self.area != API_KEYS || actor.admin || self.owner == actor.principal)
    }
}

async fn actors(app: &TestApp) -> Vec<Actor> {
    let member = app.principal(&app.account_id, false).await;
    let other_member = app.principal(&app.other_account_id, false).await;
    let other_admin = app
        .state
        .store
        .authenticate_api_key(&app.other_key)
        .await
        .unwrap()
        .unwrap();
    vec![
        Actor {
            account: 0,
            principal: app.admin_id.clone(),
            key: app.admin_key.clone(),
            admin: true,
        },
        Actor {
            account: 0,
            principal: member.principal_id,
            key: member.api_key,
            admin: false,
        },
        Actor {
            account: 1,
            principal: other_admin.principal_id,
            key: app.other_key.clone(),
            admin: true,
        },
        Actor {
            account: 1,
            principal: other_member.principal_id,
            key: other_member.api_key,
            admin: false,
        },
    ]
}

/// A random id of `made` for which `pick` holds, if any.
fn any_id(
    made: &BTreeMap<String, Made>,
    rng: &mut StdRng,
    pick: impl Fn(&Made) -> bool,
) -> Option<String> {
    let ids: Vec<&String> = made
        .iter()
        .filter(|(_, m)| pick(m))
        .map(|(id, _)| id)
        .collect();
    (!ids.is_empty()).then(|| ids[rng.gen_range(0..ids.len())].clone())
}

/// Whether a destination is named by a subscription that exists.
fn in_use(made: &BTreeMap<String, Made>, destination: &str) -> bool {
    made.values()
        .any(|m| m.alive && m.area == SUBSCRIPTIONS && m.uses.iter().any(|d| d == destination))
}

async fn run(seed: u64) {
    let app = TestApp::new().await;
    let actors = actors(&app).await;
    let accounts = [app.account_id.clone(), app.other_account_id.clone()];
    let mut rng = StdRng::seed_from_u64(seed);
    let mut made: BTreeMap<String, Made> = BTreeMap::new();
    let mut sessions = 0u64;
    for step in 0..STEPS {
        let actor = &actors[rng.gen_range(0..actors.len())];
        let area = rng.gen_range(0..AREAS.len());
        // An id of any account and any area, most often one that exists.
        let target = any_id(&made, &mut rng, |_| true);
        let at = format!("seed {seed} step {step}");
        match (rng.gen_range(0..12), target) {
            (0..=2, _) | (_, None) => {
                // Sessions come from agents (below); anything else through the API.
                let area = if area == SESSIONS { CREDENTIALS } else { area };
                let (path, body) = (AREAS[area].path, AREAS[area].create.unwrap());
                let description = format!("made at {at}");
                let mut body = body();
                body["description"] = json!(description);
                let r = app.post(path, body).key(&actor.key).send(&app).await;
                assert_eq!(r.status, 201, "{at}: POST {path}: {}", r.text);
                let id = r.json["id"].as_str().unwrap().to_owned();
                let owner = r.json["owner_id"]
                    .as_str()
                    .unwrap_or(&actor.principal)
                    .to_owned();
                assert_eq!(
                    owner, actor.principal,
                    "{at}: the owner defaults to the caller"
                );
                made.insert(id, Made::new(area, actor.account, owner, description));
            }
            (3..=4, Some(id)) => {
                let m = &made[&id];
                let r = app
                    .get(&format!("{}/{id}", AREAS[m.area].path))
                    .key(&actor.key)
                    .send(&app)
                    .await;
                if m.reachable_by(actor) {
                    assert_eq!(r.status, 200, "{at}: GET {id}: {}", r.text);
                    if m.area == SESSIONS {
                        assert_eq!(r.json["credential"]["id"], json!(m.credential), "{at}");
                    } else {
                        assert_eq!(r.json["description"], m.description, "{at}");
                    }
                } else {
                    r.error(404, "ERR_TUNNEL_120");
                }
            }
            (5..=6, Some(id)) if AREAS[made[&id].area].writable => {
                let description = format!("changed at {at}");
                let m = made.get_mut(&id).unwrap();
                let r = app
                    .patch(
                        &format!("{}/{id}", AREAS[m.area].path),
                        json!({"description": description}),
                    )
                    .key(&actor.key)
                    .send(&app)
                    .await;
                if m.reachable_by(actor) {
                    assert_eq!(r.status, 200, "{at}: PATCH {id}: {}", r.text);
                    m.description = description;
                } else {
                    r.error(404, "ERR_TUNNEL_120");
                }
            }
            (7, Some(id)) if AREAS[made[&id].area].writable => {
                let used = in_use(&made, &id);
                let m = made.get_mut(&id).unwrap();
                let r = app
                    .delete(&format!("{}/{id}", AREAS[m.area].path))
                    .key(&actor.key)
                    .send(&app)
                    .await;
                if !m.reachable_by(actor) {
                    r.error(404, "ERR_TUNNEL_120");
                } else if used {
                    r.error(409, "ERR_TUNNEL_122");
                } else {
                    assert_eq!(r.status, 204, "{at}: DELETE {id}: {}", r.text);
                    m.alive = false;
                    if m.area == CREDENTIALS {
                        // Its sessions end with it.
                        for s in made.values_mut() {
                            if s.credential.as_deref() == Some(id.as_str()) {
                                s.alive = false;
                            }
                        }
                    }
                }
            }
            (8, _) => {
                // A credential for the other person of the caller's account.
                let other = actors
                    .iter()
                    .find(|a| a.account == actor.account && a.principal != actor.principal)
                    .unwrap();
                let r = app
                    .post("/credentials", json!({"owner_id": other.principal}))
                    .key(&actor.key)
                    .send(&app)
                    .await;
                if actor.admin {
                    assert_eq!(r.status, 201, "{at}: {}", r.text);
                    made.insert(
                        r.json["id"].as_str().unwrap().to_owned(),
                        Made::new(
                            CREDENTIALS,
                            actor.account,
                            other.principal.clone(),
                            String::new(),
                        ),
                    );
                } else {
                    r.error(403, "ERR_TUNNEL_123");
                }
                // Nobody names a principal of the other account.
                let stranger = actors.iter().find(|a| a.account != actor.account).unwrap();
                let r = app
                    .post("/credentials", json!({"owner_id": stranger.principal}))
                    .key(&actor.key)
                    .send(&app)
                    .await;
                assert!(matches!(r.status, 400 | 403), "{at}: {}", r.text);
            }
            (9, _) => {
                // An agent connects with the authtoken of a credential of either account: the
                // session is that account's.
                let Some(credential) =
                    any_id(&made, &mut rng, |m| m.alive && m.area == CREDENTIALS)
                else {
                    continue;
                };
                let account = made[&credential].account;
                sessions += 1;
                let live = session(&app, sessions, &accounts[account], &credential);
                let id = live.session.id.clone();
                app.state.sessions().register(live).await.unwrap();
                let mut m = Made::new(SESSIONS, account, String::new(), String::new());
                m.credential = Some(credential);
                made.insert(id, m);
            }
            (10, _) => {
                // A subscription naming a destination of either account.
                let Some(destination) = any_id(&made, &mut rng, |m| m.area == DESTINATIONS) else {
                    continue;
                };
                let r = app
                    .post(
                        "/event_subscriptions",
                        json!({"destination_ids": [destination]}),
                    )
                    .key(&actor.key)
                    .send(&app)
                    .await;
                if made[&destination].reachable_by(actor) {
                    assert_eq!(r.status, 201, "{at}: {}", r.text);
                    let mut m = Made::new(
                        SUBSCRIPTIONS,
                        actor.account,
                        actor.principal.clone(),
                        String::new(),
                    );
                    m.uses.push(destination);
                    made.insert(r.json["id"].as_str().unwrap().to_owned(), m);
                } else {
                    r.error(400, "ERR_TUNNEL_121");
                }
            }
            (_, _) => {
                let Area { path, field, .. } = AREAS[area];
                let r = app
                    .get(&format!("{path}?limit=100"))
                    .key(&actor.key)
                    .send(&app)
                    .await;
                assert_eq!(r.status, 200, "{at}: GET {path}: {}", r.text);
                let mut listed: Vec<String> = r.json[field]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|item| item["id"].as_str().unwrap().to_owned())
                    // The actors' own keys are not the run's.
                    .filter(|id| made.contains_key(id))
                    .collect();
                listed.sort();
                let expected: Vec<String> = made
                    .iter()
                    .filter(|(_, m)| m.area == area && m.reachable_by(actor))
                    .map(|(id, _)| id.clone())
                    .collect();
                assert_eq!(listed, expected, "{at}: GET {path} as {}", actor.principal);
            }
        }
    }
    // Every area was reached, so the run says something about each.
    for (i, area) in AREAS.iter().enumerate() {
        assert!(
            made.values().any(|m| m.area == i),
            "seed {seed}: nothing made in {}",
            area.path
        );
    }
    // The audit log of each account names none of the other account's resources.
    for actor in actors.iter().filter(|a| a.admin) {
        let r = app
            .get("/events?limit=100")
            .key(&actor.key)
            .send(&app)
            .await;
        assert_eq!(r.status, 200, "{}", r.text);
        let text = r.text.clone();
        for (id, m) in &made {
            if m.account != actor.account {
                assert!(
                    !text.contains(id.as_str()),
                    "seed {seed}: {id} in the other account's log"
                );
            }
        }
    }
}

#[tokio::test]
async fn accounts_never_see_each_other_and_members_reach_only_what_they_may() {
    for seed in 0..SEEDS {
        run(seed).await;
    }
}

/// The users and bots (read-only through the API, `docs/api/users.md`): every actor lists
/// exactly the principals of its own account, and reads none of the other's.
#[tokio::test]
async fn users_and_bots_are_seen_only_by_their_own_account() {
    let app = TestApp::new().await;
    let actors = actors(&app).await;
    let bot = app.principal(&app.other_account_id, true).await;
    let mut of_account: [Vec<String>; 2] =
        [vec![app.user_id.clone()], vec![bot.principal_id.clone()]];
    for actor in &actors {
        of_account[actor.account].push(actor.principal.clone());
    }
    for list in &mut of_account {
        list.sort();
    }
    for actor in &actors {
        let r = app.get("/users?limit=100").key(&actor.key).send(&app).await;
        assert_eq!(r.status, 200, "{}", r.text);
        let json: Value = r.body();
        let mut listed: Vec<String> = json["users"]
            .as_array()
            .unwrap()
            .iter()
            .map(|u| u["id"].as_str().unwrap().to_owned())
            .collect();
        listed.sort();
        assert_eq!(
            listed, of_account[actor.account],
            "GET /users as {}",
            actor.principal
        );
        for other in &of_account[1 - actor.account] {
            app.get(&format!("/users/{other}"))
                .key(&actor.key)
                .send(&app)
                .await
                .error(404, "ERR_TUNNEL_120");
        }
    }
}
