//! What the wire types' derives cannot say, written onto their schemas: text limits (with the
//! unit they count), list bounds, and the closed sets of values some string fields take. The
//! values come from `tunnel_core`'s own constants, the ones its validation checks; the tests
//! below hold each limit against that validation.

use serde_json::{Map, Value, json};
use tunnel_core::ids::{IdKind, SUFFIX_LEN};
use tunnel_core::limits::{self, TextLimit, Unit};
use tunnel_core::ssh::{EllipticCurve, KeyType, RSA_KEY_SIZES};

/// Request schemas and the limits of their `description` and `metadata`.
pub const TEXT_LIMITS: &[(&[&str], TextLimit, TextLimit)] = &[
    (
        &["CredentialCreate", "CredentialUpdate"],
        limits::CREDENTIAL_DESCRIPTION,
        limits::CREDENTIAL_METADATA,
    ),
    (
        &["ApiKeyCreate", "ApiKeyUpdate"],
        limits::API_KEY_DESCRIPTION,
        limits::API_KEY_METADATA,
    ),
    (
        &[
            "SshCertificateAuthorityCreate",
            "SshCertificateAuthorityUpdate",
        ],
        limits::SSH_CA_DESCRIPTION,
        limits::SSH_CA_METADATA,
    ),
    (
        &["EventSubscriptionCreate", "EventSubscriptionUpdate"],
        limits::EVENT_SUBSCRIPTION_DESCRIPTION,
        limits::EVENT_SUBSCRIPTION_METADATA,
    ),
    (
        &[
            "TlsEdgeCreate",
            "TlsEdgeUpdate",
            "TunnelGroupBackendCreate",
            "TunnelGroupBackendUpdate",
            "EventDestinationCreate",
            "EventDestinationUpdate",
        ],
        limits::OTHER_DESCRIPTION,
        limits::OTHER_METADATA,
    ),
];

/// Request list fields and their largest number of items.
pub const MAX_ITEMS: &[(&str, &str, usize)] = &[
    ("CredentialCreate", "acl", limits::MAX_ACL_RULES),
    ("CredentialUpdate", "acl", limits::MAX_ACL_RULES),
    (
        "EventSubscriptionCreate",
        "sources",
        limits::MAX_EVENT_SOURCES,
    ),
    (
        "EventSubscriptionUpdate",
        "sources",
        limits::MAX_EVENT_SOURCES,
    ),
    (
        "EventSubscriptionCreate",
        "destination_ids",
        limits::MAX_EVENT_DESTINATIONS,
    ),
    (
        "EventSubscriptionUpdate",
        "destination_ids",
        limits::MAX_EVENT_DESTINATIONS,
    ),
];

/// The closed sets of values of some fields. A request field also takes `""` (`0` for a
/// number), which means "not given" (docs/api/README.md), and `null` where it is nullable:
/// [`apply`] adds those.
fn closed_sets() -> Vec<(&'static str, &'static str, Vec<Value>)> {
    let key_types: Vec<Value> = KeyType::ALL.iter().map(|k| json!(k.as_str())).collect();
    let curves: Vec<Value> = EllipticCurve::ALL
        .iter()
        .map(|c| json!(c.as_str()))
        .collect();
    let sizes: Vec<Value> = RSA_KEY_SIZES.iter().map(|n| json!(n)).collect();
    let mut types: Vec<&str> = tunnel_core::event_types::CATALOGUE.to_vec();
    types.sort_unstable();
    let types: Vec<Value> = types.into_iter().map(|t| json!(t)).collect();
    let json_format = vec![json!("json")];
    vec![
        (
            "SshCertificateAuthorityCreate",
            "private_key_type",
            key_types.clone(),
        ),
        ("SshCertificateAuthorityCreate", "elliptic_curve", curves),
        ("SshCertificateAuthorityCreate", "key_size", sizes),
        ("SshCertificateAuthority", "key_type", key_types),
        ("EventDestinationCreate", "format", json_format.clone()),
        ("EventDestinationUpdate", "format", json_format.clone()),
        ("EventDestination", "format", json_format),
        ("EventSourceReplace", "type", types.clone()),
        ("EventSourceCreate", "type", types),
    ]
}

/// Request fields naming other resources: the pattern of their ids (`""`, "not given", too where
/// a field is optional). Whether the resource exists is the server's to say (400
/// `ERR_TUNNEL_121`).
fn id_fields() -> Vec<(&'static str, &'static str, String)> {
    let id = |kinds: &[IdKind], optional: bool| {
        let prefixes: Vec<&str> = kinds.iter().map(|k| k.prefix()).collect();
        let empty = if optional { "|" } else { "" };
        format!(
            "^({empty}({})[0-9A-Za-z]{{{SUFFIX_LEN}}})$",
            prefixes.join("|")
        )
    };
    let owner = id(&[IdKind::User, IdKind::Bot], true);
    let destination = id(&[IdKind::EventDestination], false);
    vec![
        ("CredentialCreate", "owner_id", owner.clone()),
        ("ApiKeyCreate", "owner_id", owner),
        (
            "EventSubscriptionCreate",
            "destination_ids",
            destination.clone(),
        ),
        ("EventSubscriptionUpdate", "destination_ids", destination),
    ]
}

/// The sentence that says what a text limit counts.
pub fn limit_sentence(limit: &TextLimit) -> String {
    match limit.unit {
        Unit::Bytes => format!(
            "At most {} bytes of UTF-8 (maxLength counts characters, so it holds only for ASCII \
             text; the bytes are what the server checks).",
            limit.max
        ),
        Unit::Chars => format!("At most {} characters (Unicode scalar values).", limit.max),
    }
}

/// The schema of property `name` of schema `schema`; a constraint on a property that does not
/// exist is a mistake in the tables above.
fn property<'a>(schemas: &'a mut Map<String, Value>, schema: &str, name: &str) -> &'a mut Value {
    match schemas
        .get_mut(schema)
        .and_then(|s| s["properties"].get_mut(name))
    {
        Some(p) => p,
        None => panic!("no property {schema}.{name} to constrain"),
    }
}

/// Whether a property's `type` allows `t`.
fn allows(p: &Value, t: &str) -> bool {
    p["type"] == t
        || p["type"]
            .as_array()
            .is_some_and(|all| all.contains(&json!(t)))
}

/// Writes every constraint above onto `schemas` (the document's `components.schemas`).
pub fn apply(schemas: &mut Map<String, Value>) {
    for (names, description, metadata) in TEXT_LIMITS {
        for schema in *names {
            for limit in [description, metadata] {
                let p = property(schemas, schema, limit.field);
                p["maxLength"] = json!(limit.max);
                if limit.unit == Unit::Bytes {
                    p["x-max-bytes"] = json!(limit.max);
                }
                p["description"] = json!(limit_sentence(limit));
            }
        }
    }
    for (schema, name, max) in MAX_ITEMS {
        property(schemas, schema, name)["maxItems"] = json!(max);
    }
    for (schema, name, mut values) in closed_sets() {
        let request = schemas[schema]["additionalProperties"] == json!(false);
        // A required field has no "not given".
        let required = schemas[schema]["required"]
            .as_array()
            .is_some_and(|r| r.contains(&json!(name)));
        let p = property(schemas, schema, name);
        if request && !required {
            values.push(if allows(p, "integer") {
                json!(0)
            } else {
                json!("")
            });
        }
        if allows(p, "null") {
            values.push(Value::Null);
        }
        p["enum"] = json!(values);
    }
    for (schema, name, pattern) in id_fields() {
        let p = property(schemas, schema, name);
        let target = if allows(p, "array") {
            &mut p["items"]
        } else {
            p
        };
        target["pattern"] = json!(pattern);
    }
}
