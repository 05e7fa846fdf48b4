//! Standard Webhooks signatures: secrets are `whsec_<base64 of 32 random bytes>`, and a request
//! is signed with `v1,<base64(HMAC-SHA256(key, "{webhook-id}.{webhook-timestamp}.{body}"))>`
//! where the key is the base64-decoded part after `whsec_`. Several signatures (the current
//! secret's and, after a rotation, the previous one's) go space-separated in one header, so a
//! receiver holding either secret verifies the request.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac as _};
use rand::RngCore as _;
use sha2::Sha256;

/// The prefix of a signing secret.
pub const SECRET_PREFIX: &str = "whsec_";

/// A fresh signing secret.
pub fn new_secret() -> String {
    let mut key = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut key);
    format!("{SECRET_PREFIX}{}", STANDARD.encode(key))
}

/// The `webhook-signature` value of `body` sent as message `id` at `timestamp` (Unix seconds),
/// one `v1,…` per secret. A secret that is not `whsec_<base64>` is skipped (none is stored).
pub fn signature_header(secrets: &[&str], id: &str, timestamp: i64, body: &[u8]) -> String {
    secrets
        .iter()
        .filter_map(|secret| sign(secret, id, timestamp, body))
        .collect::<Vec<_>>()
        .join(" ")
}

/// One `v1,<base64>` signature.
fn sign(secret: &str, id: &str, timestamp: i64, body: &[u8]) -> Option<String> {
    let key = STANDARD.decode(secret.strip_prefix(SECRET_PREFIX)?).ok()?;
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).ok()?;
    mac.update(format!("{id}.{timestamp}.").as_bytes());
    mac.update(body);
    Some(format!(
        "v1,{}",
        STANDARD.encode(mac.finalize().into_bytes())
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_standard_webhooks_example() {
        // The example of the Standard Webhooks specification's reference libraries.
        let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
        let body = br#"{"test": 2432232314}"#;
        assert_eq!(
            signature_header(&[secret], "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
    }

    #[test]
    fn two_secrets_give_two_signatures_and_a_bad_one_none() {
        let (a, b) = (new_secret(), new_secret());
        let both = signature_header(&[&a, &b], "ev_1", 1, b"{}");
        let parts: Vec<&str> = both.split(' ').collect();
        assert_eq!(parts.len(), 2);
        assert!(parts.iter().all(|p| p.starts_with("v1,")));
        assert_eq!(signature_header(&["nope"], "ev_1", 1, b"{}"), "");
    }
}
