//! Account isolation and what admins alone may do, as a property (docs/accounts.md): random
//! interleaved operations (create, get, update, delete, list) on credentials, SSH CAs, TLS
//! edges, backends and API keys, by an admin and a member of each of two accounts, each
//! checked against a model of who may see what. Nothing of one account is ever visible to,
//! changed by or counted for the other; a member reaches only their own API keys and cannot make
//! a credential for someone else; the audit log of each account names only its own resources.
//! Seeded, so a failure names its seed and replays.

use crate::common::TestApp;
use rand::rngs::StdRng;
use rand::{Rng as _, SeedableRng as _};
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// An area exercised: its path, its list's field, the body of a create.
type Area = (&'static str, &'static str, fn() -> Value);

const AREAS: [Area; 5] = [
    ("/credentials", "credentials", || json!({})),
    (
        "/ssh_certificate_authorities",
        "ssh_certificate_authorities",
        || json!({}),
    ),
    ("/edges/tls", "tls_edges", || json!({"hostports": []})),
    (
        "/backends/tunnel_group",
        "backends",
        || json!({"labels": {"app": "web"}}),
    ),
    ("/api_keys", "keys", || json!({})),
];
const API_KEYS: usize = 4;

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

async fn run(seed: u64) {
    let app = TestApp::new().await;
    let actors = actors(&app).await;
    let mut rng = StdRng::seed_from_u64(seed);
    let mut made: BTreeMap<String, Made> = BTreeMap::new();
    for step in 0..STEPS {
        let actor = &actors[rng.gen_range(0..actors.len())];
        let area = rng.gen_range(0..AREAS.len());
        let (path, field, body) = AREAS[area];
        // An id of any account and any area, most often one that exists.
        let target = (!made.is_empty()).then(|| {
            let ids: Vec<&String> = made.keys().collect();
            ids[rng.gen_range(0..ids.len())].clone()
        });
        let at = format!("seed {seed} step {step}");
        match (rng.gen_range(0..10), target) {
            (0..=2, _) | (_, None) => {
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
                made.insert(
                    id,
                    Made {
                        area,
                        account: actor.account,
                        owner,
                        description,
                        alive: true,
                    },
                );
            }
            (3..=4, Some(id)) => {
                let m = &made[&id];
                let r = app
                    .get(&format!("{}/{id}", AREAS[m.area].0))
                    .key(&actor.key)
                    .send(&app)
                    .await;
                if m.reachable_by(actor) {
                    assert_eq!(r.status, 200, "{at}: GET {id}: {}", r.text);
                    assert_eq!(r.json["description"], m.description, "{at}");
                } else {
                    r.error(404, "ERR_TUNNEL_120");
                }
            }
            (5..=6, Some(id)) => {
                let description = format!("changed at {at}");
                let m = made.get_mut(&id).unwrap();
                let r = app
                    .patch(
                        &format!("{}/{id}", AREAS[m.area].0),
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
            (7, Some(id)) => {
                let m = made.get_mut(&id).unwrap();
                let r = app
                    .delete(&format!("{}/{id}", AREAS[m.area].0))
                    .key(&actor.key)
                    .send(&app)
                    .await;
                if m.reachable_by(actor) {
                    assert_eq!(r.status, 204, "{at}: DELETE {id}: {}", r.text);
                    m.alive = false;
                } else {
                    r.error(404, "ERR_TUNNEL_120");
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
                        Made {
                            area: 0,
                            account: actor.account,
                            owner: other.principal.clone(),
                            description: String::new(),
                            alive: true,
                        },
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
            (_, _) => {
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
