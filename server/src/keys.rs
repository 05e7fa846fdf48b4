//! SSH certificate authority keys: generation of real key pairs, and sealing of the private key
//! at rest with the server key. The same vault seals the signing secrets of webhook destinations
//! (`webhooks`), each bound to its destination's id.
//!
//! The server key is 32 random bytes: from `TUNNEL_SERVER_KEY` (64 hex digits) when given,
//! otherwise from `server.key` in the data directory (created with mode 0600 on first start).
//! Private keys are sealed with ChaCha20-Poly1305 under a fresh random nonce, with the authority
//! id as associated data so a sealed key cannot be moved to another row. Generation is CPU-bound
//! (RSA 4096 takes seconds) and always runs on the blocking pool, never on the async runtime,
//! and at most one RSA generation per core runs at once ([`KeyGenLimiter`]): without a limit, a
//! burst of RSA requests would queue unbounded CPU work (which cannot be cancelled once started,
//! even when the client goes away) and starve every other blocking task of the server. Ed25519
//! and ECDSA keys take a millisecond at most and are not limited.

use crate::error::{ApiError, ApiResult};
use anyhow::Context as _;
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce};
use rand::RngCore as _;
use sha2::Digest as _;
use ssh_key::private::{EcdsaKeypair, Ed25519Keypair, KeypairData, RsaKeypair};
use ssh_key::{EcdsaCurve, LineEnding, PrivateKey};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tunnel_core::errors::ErrorCode;
use tunnel_core::ssh::{EllipticCurve, KeySpec};

const NONCE_LEN: usize = 12;
/// File name of the server key in the data directory.
pub const SERVER_KEY_FILE: &str = "server.key";

/// Seals and opens private keys; cheap to clone, never prints the key.
#[derive(Clone)]
pub struct KeyVault {
    cipher: ChaCha20Poly1305,
    /// A secret derived from the key, for what every server of the installation must share
    /// besides it: the default cluster secret ([`KeyVault::cluster_secret`]).
    derived: [u8; 32],
}

impl std::fmt::Debug for KeyVault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("KeyVault(…)")
    }
}

impl KeyVault {
    pub fn from_bytes(key: [u8; 32]) -> KeyVault {
        let derived = sha2::Sha256::new()
            .chain_update(b"tunnel-server cluster secret v1\0")
            .chain_update(key)
            .finalize()
            .into();
        KeyVault {
            cipher: ChaCha20Poly1305::new(Key::from_slice(&key)),
            derived,
        }
    }

    /// The cluster secret of servers started without `--cluster-secret`: derived from the
    /// server key (one-way), which every node of an installation already shares.
    pub fn cluster_secret(&self) -> String {
        self.derived.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// A vault with a random key: for in-memory databases, whose data dies with the process.
    pub fn ephemeral() -> KeyVault {
        let mut key = [0u8; 32];
        rand::rngs::OsRng.fill_bytes(&mut key);
        KeyVault::from_bytes(key)
    }

    /// The vault of a server: the key from `env_key` (hex) if given, else from (or newly into)
    /// `data_dir/server.key`, else ephemeral when there is no data directory.
    pub fn load(env_key: Option<&str>, data_dir: Option<&Path>) -> anyhow::Result<KeyVault> {
        if let Some(hex) = env_key.filter(|k| !k.trim().is_empty()) {
            return Ok(KeyVault::from_bytes(parse_hex_key(hex.trim()).context(
                "--server-key (TUNNEL_SERVER_KEY) must be 64 hex digits",
            )?));
        }
        let Some(dir) = data_dir else {
            return Ok(KeyVault::ephemeral());
        };
        let path = dir.join(SERVER_KEY_FILE);
        if path.exists() {
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("cannot read {}", path.display()))?;
            let key = parse_hex_key(text.trim())
                .with_context(|| format!("{} must hold 64 hex digits", path.display()))?;
            return Ok(KeyVault::from_bytes(key));
        }
        std::fs::create_dir_all(dir)?;
        let mut key = [0u8; 32];
        rand::rngs::OsRng.fill_bytes(&mut key);
        let hex: String = key.iter().map(|b| format!("{b:02x}")).collect();
        write_private(&path, &hex).with_context(|| format!("cannot write {}", path.display()))?;
        tracing::info!(path = %path.display(), "created the server key that seals SSH CA private keys");
        Ok(KeyVault::from_bytes(key))
    }

    /// `nonce || ciphertext` of `plaintext`, bound to `context` (the authority id).
    pub fn seal(&self, plaintext: &[u8], context: &str) -> anyhow::Result<Vec<u8>> {
        let mut nonce = [0u8; NONCE_LEN];
        rand::rngs::OsRng.fill_bytes(&mut nonce);
        let sealed = self
            .cipher
            .encrypt(
                Nonce::from_slice(&nonce),
                Payload {
                    msg: plaintext,
                    aad: context.as_bytes(),
                },
            )
            .map_err(|_| anyhow::anyhow!("sealing failed"))?;
        Ok([nonce.as_slice(), &sealed].concat())
    }

    /// The plaintext of a [`KeyVault::seal`]ed key or secret: webhook delivery opens the signing
    /// secrets of destinations with it. No API operation reads an SSH private key back yet
    /// (none signs with the authority), but this stays public on purpose: the integration
    /// tests (`server/tests/`, which `#[cfg(test)]` does not reach) prove with it that a stored
    /// key really opens with the server key, also after a restart; sealing without a tested way
    /// back would be a silent data loss. The first signing operation will use it.
    pub fn open(&self, sealed: &[u8], context: &str) -> anyhow::Result<Vec<u8>> {
        anyhow::ensure!(sealed.len() > NONCE_LEN, "sealed key too short");
        let (nonce, body) = sealed.split_at(NONCE_LEN);
        self.cipher
            .decrypt(
                Nonce::from_slice(nonce),
                Payload {
                    msg: body,
                    aad: context.as_bytes(),
                },
            )
            .map_err(|_| anyhow::anyhow!("the sealed key does not open with this server key"))
    }
}

fn parse_hex_key(hex: &str) -> Option<[u8; 32]> {
    if hex.len() != 64 || !hex.is_ascii() {
        return None;
    }
    let mut key = [0u8; 32];
    for (i, byte) in key.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(key)
}

/// Writes `text` to the new file `path`, readable by its owner only.
fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    crate::store::private_file(path)?.write_all(text.as_bytes())
}

/// A generated key pair: the public key as one OpenSSH line, the private key in OpenSSH PEM.
pub struct GeneratedKey {
    pub public_line: String,
    /// Wiped from memory when dropped.
    pub private_openssh: zeroize::Zeroizing<String>,
}

impl std::fmt::Debug for GeneratedKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GeneratedKey")
            .field("public_line", &self.public_line)
            .finish_non_exhaustive()
    }
}

/// Generates a key pair (CPU-bound: call through [`KeyGenLimiter::generate`] from async code).
pub fn generate(spec: KeySpec) -> anyhow::Result<GeneratedKey> {
    let mut rng = rand::rngs::OsRng;
    let data = match spec {
        KeySpec::Ed25519 => KeypairData::from(Ed25519Keypair::random(&mut rng)),
        KeySpec::Ecdsa(curve) => {
            let curve = match curve {
                EllipticCurve::P256 => EcdsaCurve::NistP256,
                EllipticCurve::P384 => EcdsaCurve::NistP384,
                EllipticCurve::P521 => EcdsaCurve::NistP521,
            };
            KeypairData::from(EcdsaKeypair::random(&mut rng, curve)?)
        }
        KeySpec::Rsa(bits) => {
            KeypairData::from(RsaKeypair::random(&mut rng, usize::try_from(bits)?)?)
        }
    };
    let key = PrivateKey::new(data, "")?;
    let public = key.public_key().to_openssh()?;
    // `<algorithm> <base64>` exactly: no comment.
    let public_line = public
        .split_whitespace()
        .take(2)
        .collect::<Vec<_>>()
        .join(" ");
    anyhow::ensure!(
        public_line.starts_with(spec.ssh_algorithm()),
        "unexpected algorithm in {public_line}"
    );
    Ok(GeneratedKey {
        public_line,
        private_openssh: key.to_openssh(LineEnding::LF)?,
    })
}

/// Bounds concurrent RSA key generations: a request waits at most `wait` for one of the permits,
/// then gets 503 [`ErrorCode::KeyGenerationBusy`] rather than queueing behind a burst. Cheap to
/// clone (shared permits).
#[derive(Debug, Clone)]
pub struct KeyGenLimiter {
    permits: Arc<Semaphore>,
    wait: Duration,
}

impl Default for KeyGenLimiter {
    /// One generation per core (generation is CPU-bound: more would only slow each other down);
    /// a request may wait a few seconds, about one RSA-4096 generation, for its turn.
    fn default() -> KeyGenLimiter {
        let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
        KeyGenLimiter::new(cores, Duration::from_secs(5))
    }
}

impl KeyGenLimiter {
    pub fn new(permits: usize, wait: Duration) -> KeyGenLimiter {
        KeyGenLimiter {
            permits: Arc::new(Semaphore::new(permits.max(1))),
            wait,
        }
    }

    /// A permit to generate one key, or 503 when none frees up within the wait.
    pub async fn acquire(&self) -> ApiResult<OwnedSemaphorePermit> {
        match tokio::time::timeout(self.wait, Arc::clone(&self.permits).acquire_owned()).await {
            Ok(Ok(permit)) => Ok(permit),
            Ok(Err(closed)) => Err(ApiError::Internal(closed.into())),
            // About one generation's time, as the wait was: when to try again.
            Err(_elapsed) => Err(ApiError::new(
                ErrorCode::KeyGenerationBusy,
                "The server is busy generating other SSH keys; retry in a few seconds.",
            )
            .with_retry_after(self.wait.as_secs().max(1))),
        }
    }

    /// [`generate`] on the blocking thread pool, so the runtime keeps serving other requests;
    /// an RSA key under a permit. The permit moves into the blocking task: a generation
    /// abandoned by its client still holds it until the CPU work really ends. Ed25519 and
    /// ECDSA keys take a millisecond or less: they need no permit, so that they are not refused
    /// behind RSA generations of seconds each.
    pub async fn generate(&self, spec: KeySpec) -> ApiResult<GeneratedKey> {
        let permit = match spec {
            KeySpec::Rsa(_) => Some(self.acquire().await?),
            KeySpec::Ed25519 | KeySpec::Ecdsa(_) => None,
        };
        let key = tokio::task::spawn_blocking(move || {
            let key = generate(spec);
            drop(permit);
            key
        })
        .await
        .map_err(anyhow::Error::from)??;
        Ok(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seal_round_trips_and_is_bound_to_its_context() {
        let vault = KeyVault::ephemeral();
        let sealed = vault.seal(b"private", "sshca_1").unwrap();
        assert!(!sealed.windows(7).any(|w| w == b"private"));
        assert_eq!(vault.open(&sealed, "sshca_1").unwrap(), b"private");
        assert!(vault.open(&sealed, "sshca_2").is_err());
        assert!(KeyVault::ephemeral().open(&sealed, "sshca_1").is_err());
    }

    #[test]
    fn server_key_file_is_created_once_and_reused() {
        let dir = tempfile::tempdir().unwrap();
        let a = KeyVault::load(None, Some(dir.path())).unwrap();
        let sealed = a.seal(b"x", "c").unwrap();
        let b = KeyVault::load(None, Some(dir.path())).unwrap();
        assert_eq!(b.open(&sealed, "c").unwrap(), b"x");
        let env = KeyVault::load(Some(&"ab".repeat(32)), Some(dir.path())).unwrap();
        assert!(env.open(&sealed, "c").is_err());
        assert!(KeyVault::load(Some("nothex"), None).is_err());
    }

    #[test]
    fn generated_keys_have_the_right_algorithm() {
        for spec in [
            KeySpec::Ed25519,
            KeySpec::Ecdsa(EllipticCurve::P256),
            KeySpec::Ecdsa(EllipticCurve::P521),
        ] {
            let key = generate(spec).unwrap();
            let parsed = ssh_key::PublicKey::from_openssh(&key.public_line).unwrap();
            assert_eq!(parsed.algorithm().as_str(), spec.ssh_algorithm());
            let private = PrivateKey::from_openssh(&key.private_openssh).unwrap();
            assert_eq!(private.public_key().key_data(), parsed.key_data());
        }
    }
}
