//! Secrets kept out of logs: [`Secret`] prints as `<redacted>`. Used by the configuration (the
//! server key, the bootstrap API key) and the store (a credential's token, returned once; the
//! PostgreSQL URL of the read connections, which may hold a password).

/// A secret (a key given to `serve`, a token just created): its `Debug` never shows it, so
/// what holds one can derive `Debug` and be logged whole.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn expose(&self) -> &str {
        &self.0
    }

    pub fn into_inner(self) -> String {
        self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<redacted>")
    }
}

impl std::str::FromStr for Secret {
    type Err = std::convert::Infallible;

    fn from_str(text: &str) -> Result<Secret, Self::Err> {
        Ok(Secret(text.to_owned()))
    }
}

impl From<String> for Secret {
    fn from(text: String) -> Secret {
        Secret(text)
    }
}
