//! The one HTTP client of the console: typed calls on `tunnel-core` types.
//!
//! Every request goes through [`Api::send`], which adds the `Authorization`, `Service-Version`
//! and (with a body) `Content-Type` headers. Every non-2xx answer becomes an [`ApiError`] holding
//! the decoded error body; a 401 also signs the user out with a message, since nothing else
//! will work with that key.

use crate::state::AppState;
use gloo_net::http::{Method, RequestBuilder};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tunnel_core::ErrorBody;
use tunnel_core::paths::{OPERATION_ID_HEADER, SUPPORTED_VERSION, VERSION_HEADER};

/// A failed call: the decoded error body when the server sent one, or a network problem.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    /// HTTP status; 0 when the request did not reach the server.
    pub status: u16,
    /// Boxed: the error body is large, and results carrying it travel through every call.
    pub body: Option<Box<ErrorBody>>,
    /// What went wrong when there is no error body (network, unreadable answer).
    pub message: String,
}

impl ApiError {
    /// Decodes a non-2xx answer. The `Operation-Id` header fills in a missing operation id.
    pub fn from_response(status: u16, text: &str, operation_id: Option<String>) -> ApiError {
        match serde_json::from_str::<ErrorBody>(text) {
            Ok(mut body) => {
                if body.details.operation_id.is_empty() {
                    body.details.operation_id = operation_id.unwrap_or_default();
                }
                let message = body.msg.clone();
                ApiError {
                    status,
                    body: Some(Box::new(body)),
                    message,
                }
            }
            Err(_) => {
                let mut message = format!("The server answered {status} without an error body.");
                if let Some(op) = operation_id {
                    message.push_str(&format!(" Operation id: {op}."));
                }
                ApiError {
                    status,
                    body: None,
                    message,
                }
            }
        }
    }

    pub fn network(message: impl Into<String>) -> ApiError {
        ApiError {
            status: 0,
            body: None,
            message: message.into(),
        }
    }

    pub fn code(&self) -> Option<&str> {
        self.body.as_ref().map(|b| b.error_code.as_str())
    }

    pub fn operation_id(&self) -> Option<&str> {
        self.body
            .as_ref()
            .map(|b| b.details.operation_id.as_str())
            .filter(|s| !s.is_empty())
    }

    /// The server's message for one form field (`acl[1]`, `description`, …), if it named it.
    pub fn field_message(&self, field: &str) -> Option<String> {
        self.body.as_ref()?.field_message(field).map(str::to_owned)
    }

    /// Whether the server named at least one field, so the form shows the problem in place.
    pub fn has_field_errors(&self) -> bool {
        self.body
            .as_ref()
            .is_some_and(|b| b.details.field.is_some() || !b.details.errors.is_empty())
    }
}

/// The message shown on the sign-in screen when the API refuses the key.
pub const SIGNED_OUT_401: &str = "The API refused the API key (401). Sign in again.";

/// The client. `Copy`: it only holds the app's signals and reads the sign-in on each call.
#[derive(Debug, Clone, Copy)]
pub struct Api {
    state: AppState,
}

impl Api {
    pub fn new(state: AppState) -> Api {
        Api { state }
    }

    /// `base_url` + `path_and_query`.
    fn url(&self, path_and_query: &str) -> Option<(String, String)> {
        let auth = self.state.auth_untracked()?;
        Some((format!("{}{path_and_query}", auth.base()), auth.api_key))
    }

    /// Sends one request; the only place headers are set and errors decoded.
    async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<String>,
    ) -> Result<String, ApiError> {
        let Some((url, key)) = self.url(path) else {
            return Err(ApiError::network("Not signed in."));
        };
        let builder = RequestBuilder::new(&url)
            .method(method)
            .header("Authorization", &format!("Bearer {key}"))
            .header(VERSION_HEADER, SUPPORTED_VERSION);
        let request = match body {
            Some(json) => builder
                .header("Content-Type", "application/json")
                .body(json),
            None => builder.build(),
        }
        .map_err(|e| ApiError::network(format!("Could not build the request: {e}")))?;
        let response = request.send().await.map_err(|e| {
            ApiError::network(format!("The API at {url} could not be reached: {e}"))
        })?;
        let status = response.status();
        let text = response.text().await.unwrap_or_default();
        if (200..300).contains(&status) {
            return Ok(text);
        }
        let error =
            ApiError::from_response(status, &text, response.headers().get(OPERATION_ID_HEADER));
        if status == 401 {
            self.state
                .sign_out(Some(format!("{SIGNED_OUT_401} {}", error.message)));
        }
        Err(error)
    }

    fn decode<T: DeserializeOwned>(text: &str) -> Result<T, ApiError> {
        serde_json::from_str(text)
            .map_err(|e| ApiError::network(format!("The API's answer could not be read: {e}")))
    }

    fn encode<B: Serialize>(body: &B) -> Result<String, ApiError> {
        serde_json::to_string(body).map_err(|e| ApiError::network(e.to_string()))
    }

    pub async fn get<T: DeserializeOwned>(&self, path: &str) -> Result<T, ApiError> {
        Self::decode(&self.send(Method::GET, path, None).await?)
    }

    pub async fn post<B: Serialize, T: DeserializeOwned>(
        &self,
        path: &str,
        body: &B,
    ) -> Result<T, ApiError> {
        self.with_body(Method::POST, path, body).await
    }

    pub async fn patch<B: Serialize, T: DeserializeOwned>(
        &self,
        path: &str,
        body: &B,
    ) -> Result<T, ApiError> {
        self.with_body(Method::PATCH, path, body).await
    }

    pub async fn put<B: Serialize, T: DeserializeOwned>(
        &self,
        path: &str,
        body: &B,
    ) -> Result<T, ApiError> {
        self.with_body(Method::PUT, path, body).await
    }

    async fn with_body<B: Serialize, T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: &B,
    ) -> Result<T, ApiError> {
        Self::decode(&self.send(method, path, Some(Self::encode(body)?)).await?)
    }

    /// A POST answered by 204 (the agent commands take `{}`).
    pub async fn post_no_content(&self, path: &str) -> Result<(), ApiError> {
        self.send(Method::POST, path, Some("{}".to_owned()))
            .await
            .map(drop)
    }

    pub async fn delete(&self, path: &str) -> Result<(), ApiError> {
        self.send(Method::DELETE, path, None).await.map(drop)
    }
}

/// The query part (`?limit=…&before_id=…`) of a `next_page_uri`. Pages are fetched relative to
/// the configured base URL rather than at the absolute uri, which names the server's public URL
/// and may be another origin than the one the console reached.
pub fn page_query(next_page_uri: &str) -> String {
    next_page_uri
        .find('?')
        .map(|i| next_page_uri[i..].to_owned())
        .unwrap_or_default()
}
