//! SSH CA creation: `POST /api/ssh_certificate_authorities` per key type (the server generates
//! and seals the key) against `POST /api/credentials` on the same connection.

use super::number;
use crate::report::{Row, Section, ms};
use crate::server::Server;
use crate::stats::{median, percentile};
use anyhow::Result;
use std::time::Instant;

pub const NAME: &str = "ssh_cas";

/// Each key type a few times, sequential, on one connection.
pub async fn measure(server: &Server) -> Result<Section> {
    let mut s = Section::new(
        number(NAME),
        "SSH CA creation",
        "`POST /api/ssh_certificate_authorities` per key type, sequential, one connection \
         (the server generates the key, seals the private key and stores it); median of the \
         runs shown. Baseline: `POST /api/credentials` on the same connection (the cost of a \
         create request without key generation), median of 9.",
    );
    let mut conn = server.conn();
    let cred = server.post("/credentials", r#"{"description":"bench baseline"}"#);
    let mut base = Vec::new();
    for i in 0..11 {
        let t = Instant::now();
        conn.json(&cred).await?;
        if i >= 2 {
            base.push(t.elapsed().as_secs_f64() * 1000.0);
        }
    }
    let b = median(&base);
    let cases: [(&str, &str, usize); 6] = [
        ("ed25519", r#"{"private_key_type":"ed25519"}"#, 9),
        (
            "ecdsa p256",
            r#"{"private_key_type":"ecdsa","elliptic_curve":"p256"}"#,
            9,
        ),
        (
            "ecdsa p384",
            r#"{"private_key_type":"ecdsa","elliptic_curve":"p384"}"#,
            9,
        ),
        (
            "ecdsa p521",
            r#"{"private_key_type":"ecdsa","elliptic_curve":"p521"}"#,
            9,
        ),
        (
            "rsa 2048",
            r#"{"private_key_type":"rsa","key_size":2048}"#,
            5,
        ),
        (
            "rsa 4096",
            r#"{"private_key_type":"rsa","key_size":4096}"#,
            3,
        ),
    ];
    let mut raw = serde_json::Map::new();
    raw.insert("baseline_credential_ms".into(), base.clone().into());
    for (name, body, runs) in cases {
        let req = server.post("/ssh_certificate_authorities", body);
        let mut times = Vec::new();
        for _ in 0..runs {
            let t = Instant::now();
            conn.json(&req).await?;
            times.push(t.elapsed().as_secs_f64() * 1000.0);
        }
        let m = median(&times);
        println!("    {name}: median {m:.1} ms of {runs}");
        s.rows.push(Row::new(
            format!(
                "{name}, median of {runs} (slowest {})",
                ms(percentile(&times, 100.0))
            ),
            ms(m),
            format!("{} (POST /credentials)", ms(b)),
            Some(m / b),
        ));
        raw.insert(name.into(), times.into());
    }
    s.raw = raw.into();
    Ok(s)
}
