//! Compression: the API's JSON gzipped for clients that accept it (errors keep their operation
//! id), the agent channel never.

use crate::common::{Resp, TestApp};
use crate::{console_app, header};
use serde_json::{Value, json};
use std::io::Read as _;

/// The body as JSON, gunzipped first when the response says it is gzip.
fn decoded_json(r: &Resp) -> Value {
    if header(r, "content-encoding") != "gzip" {
        return serde_json::from_slice(&r.bytes).unwrap();
    }
    let mut decoded = Vec::new();
    flate2::read::GzDecoder::new(r.bytes.as_slice())
        .read_to_end(&mut decoded)
        .unwrap();
    serde_json::from_slice(&decoded).unwrap()
}

#[tokio::test]
async fn api_json_is_compressed_for_clients_that_accept_it() {
    let app = TestApp::new().await;
    for i in 0..30 {
        let description = format!("a credential with a long, compressible description, no. {i}");
        app.create("/credentials", json!({ "description": description }))
            .await;
    }
    let plain = app.get("/credentials").send(&app).await;
    assert_eq!(plain.status, 200);
    assert!(plain.headers.get("content-encoding").is_none());
    assert_eq!(plain.json["credentials"].as_array().unwrap().len(), 30);
    let gz = app
        .get("/credentials")
        .header("accept-encoding", "gzip")
        .send(&app)
        .await;
    assert_eq!(gz.status, 200);
    assert_eq!(header(&gz, "content-encoding"), "gzip");
    assert!(header(&gz, "vary").contains("accept-encoding"));
    assert!(gz.headers.contains_key("operation-id"));
    assert!(gz.bytes.len() * 3 < plain.bytes.len(), "barely compressed");
    assert_eq!(decoded_json(&gz), plain.json);
    // Errors keep their operation id, in the header and in the (compressed or not) body.
    for path in ["/credentials/cr_missing", "/nowhere"] {
        let err = app
            .get(path)
            .header("accept-encoding", "gzip")
            .send(&app)
            .await;
        assert_eq!(err.status, 404, "{path}");
        let body = decoded_json(&err);
        assert!(
            body["details"]["operation_id"]
                .as_str()
                .is_some_and(|op| op.starts_with("op_") && op == header(&err, "operation-id")),
            "{path}: {body} {:?}",
            err.headers
        );
    }
}

#[tokio::test]
async fn the_agent_channel_is_never_compressed() {
    // An upgrade request for the agent WebSocket from a client that accepts gzip. In-process
    // there is no connection to upgrade, so axum answers a text rejection long enough for the
    // compression layer's predicate: had the channel been wrapped, it would come back gzipped.
    let (_dir, app, _) = console_app().await;
    let r = app
        .get("/agent/v1/connect")
        .outside_api()
        .header("connection", "upgrade")
        .header("upgrade", "websocket")
        .header("sec-websocket-version", "13")
        .header("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ==")
        .header("accept-encoding", "gzip")
        .send(&app)
        .await;
    assert!(
        r.status >= 400 && r.status < 500,
        "{}: {}",
        r.status,
        r.text
    );
    assert!(r.bytes.len() >= 32, "{}", r.text);
    assert!(
        r.headers.get("content-encoding").is_none(),
        "{:?}",
        r.headers
    );
    assert!(
        !header(&r, "vary").contains("accept-encoding"),
        "{:?}",
        r.headers
    );
}
