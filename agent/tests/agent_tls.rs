//! `https://` server addresses: the real agent speaks TLS (`wss://`) to a loopback
//! TLS-terminating proxy in front of the real server, trusting the proxy's self-hosted CA only
//! through `SSL_CERT_FILE`; the same agent refuses a server its roots do not vouch for.

mod support;

use axum::http::StatusCode;
use std::path::PathBuf;
use std::sync::Arc;
use support::{Agent, Server, fast_timings};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// Terminates TLS with the `localhost` test certificate and relays the plain bytes to
/// `target`. Returns the proxy's port.
async fn tls_proxy(target: std::net::SocketAddr) -> u16 {
    tls_proxy_on("127.0.0.1", target).await
}

/// [`tls_proxy`] listening on the loopback address `ip`.
async fn tls_proxy_on(ip: &str, target: std::net::SocketAddr) -> u16 {
    let certs: Vec<CertificateDer<'static>> =
        CertificateDer::pem_file_iter(fixture("localhost.pem"))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
    let key = PrivateKeyDer::from_pem_file(fixture("localhost.key")).unwrap();
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(certs, key)
    .unwrap();
    let acceptor = TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind((ip, 0)).await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((inbound, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                // A client that rejects the certificate ends the handshake: nothing to relay.
                let Ok(mut tls) = acceptor.accept(inbound).await else {
                    return;
                };
                let Ok(mut outbound) = tokio::net::TcpStream::connect(target).await else {
                    return;
                };
                let _ = tokio::io::copy_bidirectional(&mut tls, &mut outbound).await;
            });
        }
    });
    port
}

/// Why the agent's first attempt to connect failed, as its "connection lost (…)" line says.
async fn failed_attempt(agent: &mut Agent) -> String {
    agent
        .wait_line("a failed attempt", |l| {
            l.strip_prefix("connection lost (").map(str::to_owned)
        })
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_https_server_is_reached_over_tls_with_a_self_hosted_ca() {
    let (server, key, token) = Server::with_credential("3.4.1", fast_timings()).await;
    let port = tls_proxy(server.addr).await;
    let url = format!("https://localhost:{port}");
    let ca = fixture("ca.pem");
    let mut agent = Agent::spawn_with_env(
        &url,
        &token,
        &[],
        &[("SSL_CERT_FILE", ca.to_str().unwrap())],
    );
    let connecting = agent
        .wait_line("the connect line", |l| {
            l.strip_prefix("connecting to ").map(str::to_owned)
        })
        .await;
    assert_eq!(
        connecting,
        format!("wss://localhost:{port}/agent/v1/connect")
    );
    let id = agent.session().await;
    assert_eq!(server.session_ids(&key).await, vec![id.clone()]);
    assert_eq!(
        server.command(&id, "stop", &key).await.0,
        StatusCode::NO_CONTENT
    );
    let (status, stderr) = agent.exit().await;
    assert!(status.success(), "{stderr}");
    // Loopback or not, TLS never earns the plain-text warning.
    assert!(!stderr.contains("unencrypted"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_certificate_outside_the_trusted_roots_is_refused() {
    let (server, key, token) = Server::with_credential("3.4.1", fast_timings()).await;
    let port = tls_proxy(server.addr).await;
    // The server's own certificate as the only "root": it is no CA, so nothing chains to it
    // and the handshake must fail rather than fall back to plain text or trust anything.
    let not_the_ca = fixture("localhost.pem");
    let mut agent = Agent::spawn_with_env(
        &format!("https://localhost:{port}"),
        &token,
        &[],
        &[("SSL_CERT_FILE", not_the_ca.to_str().unwrap())],
    );
    let reason = failed_attempt(&mut agent).await;
    // Said in the agent's words, with where to look.
    assert!(reason.contains("certificate is refused"), "{reason}");
    assert!(reason.contains("SSL_CERT_FILE"), "{reason}");
    assert!(server.session_ids(&key).await.is_empty());
    agent.kill().await;
}

/// `https://` given for a server that serves plain text: the agent says so, rather than
/// rustls's "corrupt message of type InvalidContentType".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_to_a_plain_text_server_says_to_use_http() {
    let (server, key, token) = Server::with_credential("3.4.1", fast_timings()).await;
    let url = format!("https://{}", server.addr);
    let mut agent = Agent::spawn_to(&url, &token, &[]);
    let reason = failed_attempt(&mut agent).await;
    assert!(reason.contains("did not answer in TLS"), "{reason}");
    assert!(reason.contains("http://"), "{reason}");
    assert!(server.session_ids(&key).await.is_empty());
    agent.kill().await;
}

/// A `SSL_CERT_FILE` that gives no certificate (missing, or a key file) stops the agent at
/// start, naming it: with `SSL_CERT_DIR` also set (as many systems do), it was skipped
/// silently, and the CA meant to be trusted was not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cert_file_without_certificates_stops_the_agent() {
    let missing = fixture("missing.pem");
    let key_only = fixture("localhost.key");
    let roots = "/etc/ssl/certs";
    for (file, says) in [
        (missing.to_str().unwrap(), "missing.pem"),
        (key_only.to_str().unwrap(), "holds no PEM certificate"),
    ] {
        let mut agent = Agent::spawn_with_env(
            "https://localhost:9",
            "tok",
            &[],
            &[("SSL_CERT_FILE", file), ("SSL_CERT_DIR", roots)],
        );
        let (status, stderr) = agent.exit().await;
        assert_eq!(status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("SSL_CERT_FILE"), "{stderr}");
        assert!(stderr.contains(says), "{stderr}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_http_to_loopback_is_not_warned_about() {
    let (server, key, token) = Server::with_credential("3.4.1", fast_timings()).await;
    let mut agent = Agent::spawn(&server, &token, &[]);
    let id = agent.session().await;
    assert_eq!(
        server.command(&id, "stop", &key).await.0,
        StatusCode::NO_CONTENT
    );
    let (status, stderr) = agent.exit().await;
    assert!(status.success(), "{stderr}");
    assert!(!stderr.contains("unencrypted"), "{stderr}");
}

/// A certificate of a trusted CA for another name than the one in `--server` is refused, and
/// the advice is about the name, not about trusting a CA.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_certificate_for_another_name_is_refused_saying_so() {
    let (server, key, token) = Server::with_credential("3.4.1", fast_timings()).await;
    // Another loopback address than the two the certificate is for (`localhost`, 127.0.0.1).
    let port = tls_proxy_on("127.0.0.2", server.addr).await;
    let ca = fixture("ca.pem");
    let mut agent = Agent::spawn_with_env(
        &format!("https://127.0.0.2:{port}"),
        &token,
        &[],
        &[("SSL_CERT_FILE", ca.to_str().unwrap())],
    );
    let reason = failed_attempt(&mut agent).await;
    assert!(reason.contains("not for the host in --server"), "{reason}");
    assert!(server.session_ids(&key).await.is_empty());
    agent.kill().await;
}
