//! TLS of the agent channel: `wss://` goes through rustls (the `ring` provider) trusting the
//! system's root certificates, loaded once per process; `SSL_CERT_FILE`/`SSL_CERT_DIR` replace
//! them, for self-hosted CAs.

use crate::error::AgentError;
use std::sync::Arc;
use tokio_tungstenite::Connector;

/// rustls with the `ring` provider, trusting the system's roots (or `SSL_CERT_FILE`).
pub fn connector() -> Result<Connector, AgentError> {
    check_cert_file()?;
    let found = rustls_native_certs::load_native_certs();
    let mut roots = rustls::RootCertStore::empty();
    // Unparseable system certificates are skipped, as browsers do; only none at all is fatal.
    let (added, _ignored) = roots.add_parsable_certificates(found.certs);
    if added == 0 {
        let why = found
            .errors
            .first()
            .map_or_else(String::new, |e| format!(" ({e})"));
        return Err(AgentError::Config(format!(
            "no trusted root certificates found for https{why}; install the system's CA \
             certificates or point SSL_CERT_FILE at a PEM bundle"
        )));
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| AgentError::Config(format!("cannot set up TLS: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Connector::Rustls(Arc::new(config)))
}

/// A file named by `SSL_CERT_FILE` must give certificates. The loader skips a file it cannot
/// read, or one with no certificate in it, when `SSL_CERT_DIR` gives others (as many systems
/// set it): the CA the operator meant to add would then be silently missing, and every
/// connection refused for a reason far from its cause.
fn check_cert_file() -> Result<(), AgentError> {
    let Some(file) = std::env::var_os("SSL_CERT_FILE").filter(|f| !f.is_empty()) else {
        return Ok(());
    };
    let path = std::path::Path::new(&file);
    let found = rustls_native_certs::load_certs_from_paths(Some(path), None);
    let why = match (found.errors.first(), found.certs.is_empty()) {
        (Some(e), _) => e.to_string(),
        (None, true) => "it holds no PEM certificate".to_owned(),
        (None, false) => return Ok(()),
    };
    Err(AgentError::Config(format!(
        "SSL_CERT_FILE {}: {why}",
        path.display()
    )))
}
