//! The in-process server over a real TCP socket: created resources, errors and pages answered
//! with absolute URIs of the listening address.

use crate::common::process::http;
use crate::{api_headers, on_socket};
use serde_json::Value;

#[tokio::test]
async fn in_process_server_over_a_real_socket() {
    let (addr, state, server) = on_socket(|_| {}, tunnel_server::app).await;
    let created = state.store.create_account("sock", "admin").await.unwrap();
    let key = created.api_key.clone();
    let (status, body) = tokio::task::spawn_blocking(move || {
        let auth = format!("Bearer {key}");
        let headers = api_headers(&auth);
        let (status, _, body) = http(
            addr,
            "POST",
            "/api/ssh_certificate_authorities",
            &headers,
            "{}",
        );
        assert_eq!(status, 201, "{body}");
        let (status, _, body) = http(addr, "POST", "/api/credentials", &headers, "not json");
        assert_eq!(status, 400, "{body}");
        let (status, _, body) = http(
            addr,
            "GET",
            "/api/credentials",
            &[("Service-Version", "2")],
            "",
        );
        assert_eq!(status, 401, "{body}");
        http(
            addr,
            "GET",
            "/api/ssh_certificate_authorities?limit=1",
            &headers[..2],
            "",
        )
    })
    .await
    .map(|(s, _, b)| (s, b))
    .unwrap();
    assert_eq!(status, 200, "{body}");
    let list: Value = serde_json::from_str(&body).unwrap();
    assert!(
        list["ssh_certificate_authorities"][0]["uri"]
            .as_str()
            .unwrap()
            .starts_with(&format!("http://{addr}/api/"))
    );
    server.abort();
}
