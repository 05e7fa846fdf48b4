//! SSH CA creation: `POST /api/ssh_certificate_authorities` per key type (the server generates
//! and seals the key) against `POST /api/credentials` on the same connection, on SQLite and
//! (unless `--no-postgres`) on PostgreSQL, each against its own baseline.

use super::number;
use crate::report::{Row, Section, ms};
use crate::server::{Kind, Server};
use crate::stats::{median, percentile};
use anyhow::Result;
use std::time::Instant;

pub const NAME: &str = "ssh_cas";

/// Each key type a few times, sequential, on one connection, on each server (SQLite first,
/// then PostgreSQL when given). `postgres` describes the PostgreSQL server for the section's
/// text (`None`: not measured on PostgreSQL).
pub async fn measure(servers: &[&Server], postgres: Option<&str>) -> Result<Section> {
    let mut s = Section::new(
        number(NAME),
        "SSH CA creation",
        "`POST /api/ssh_certificate_authorities` per key type, sequential, one connection \
         (the server generates the key, seals the private key and stores it); median of the \
         runs shown. Baseline: `POST /api/credentials` on the same connection (the cost of a \
         create request without key generation), median of 9.",
    );
    match postgres {
        Some(pg) => s.method.push_str(&format!(
            " Measured on SQLite and on PostgreSQL (SQLite first), each server on its own \
             small database (that of the throughput section) and each against its own baseline (`POST \
             /api/credentials` on the same server). {pg}"
        )),
        None => s.notes.push("Not measured on PostgreSQL (`--no-postgres`).".to_owned()),
    }
    let mut raw = serde_json::Map::new();
    let mut results = Vec::new();
    for server in servers {
        let (kind_raw, b, per_case) = measure_one(server).await?;
        match server.db.kind {
            Kind::Sqlite => raw.extend(kind_raw),
            Kind::Postgres => {
                raw.insert(server.db.kind.slug().into(), kind_raw.into());
            }
        }
        results.push((server.db.kind, b, per_case));
    }
    let by_kind = servers.len() > 1;
    let cases = results.first().map_or(0, |(_, _, c)| c.len());
    for c in 0..cases {
        for (kind, b, per_case) in &results {
            let (name, runs, times) = &per_case[c];
            let m = median(times);
            let row = Row::new(
                format!(
                    "{name}, median of {runs} (slowest {})",
                    ms(percentile(times, 100.0))
                ),
                ms(m),
                format!("{} (POST /credentials)", ms(*b)),
                Some(m / b),
            );
            s.rows.push(if by_kind { row.on(*kind) } else { row });
        }
    }
    s.raw = raw.into();
    Ok(s)
}

/// Times and raw figures of one key type: its name, the runs, the times (ms).
type Case = (&'static str, usize, Vec<f64>);

/// The baseline and every key type on one server: the raw JSON, the baseline median (ms) and
/// each case.
async fn measure_one(
    server: &Server,
) -> Result<(serde_json::Map<String, serde_json::Value>, f64, Vec<Case>)> {
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
    let mut results = Vec::new();
    for (name, body, runs) in cases {
        let req = server.post("/ssh_certificate_authorities", body);
        let mut times = Vec::new();
        for _ in 0..runs {
            let t = Instant::now();
            conn.json(&req).await?;
            times.push(t.elapsed().as_secs_f64() * 1000.0);
        }
        let m = median(&times);
        println!(
            "    {} {name}: median {m:.1} ms of {runs}",
            server.db.kind.label()
        );
        raw.insert(name.into(), times.clone().into());
        results.push((name, runs, times));
    }
    Ok((raw, b, results))
}
