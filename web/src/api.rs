//! The one HTTP client of the console: typed calls on `tunnel-core` types.
//!
//! Every request goes through [`Api::send`], which adds the `Authorization`, `Service-Version`
//! and (with a body) `Content-Type` headers. Every non-2xx answer becomes an [`ApiError`] holding
//! the decoded error body; a 401 also signs the user out with a message, since nothing else
//! will work with that key. A 429 (a rate limit, docs/rate-limits.md) is waited out and sent
//! again, with a calm note, up to [`RATE_LIMIT_PATIENCE_SECS`]: the server carried nothing out.

use crate::session::Auth;
use crate::state::{AppState, use_app};
pub use gloo_net::http::Method;
use gloo_net::http::RequestBuilder;
use leptos::prelude::Set as _;
use serde::Serialize;
use serde::de::DeserializeOwned;
use tunnel_core::ErrorBody;
use tunnel_core::paths::{OPERATION_ID_HEADER, SUPPORTED_VERSION, VERSION_HEADER};
use tunnel_core::resources::api_key::Me;

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

    /// The seconds a 429 asks to wait (`details.retry_after_secs`, the same as `Retry-After`).
    pub fn retry_after_secs(&self) -> Option<u64> {
        self.body
            .as_ref()?
            .details
            .extra
            .get("retry_after_secs")?
            .as_u64()
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

/// How long one request may wait out 429s before its error is shown instead.
pub const RATE_LIMIT_PATIENCE_SECS: u64 = 60;

/// The note shown while a request waits out a 429.
pub const RATE_LIMITED_NOTE: &str =
    "The server is limiting how fast requests may come; the console waits and retries by itself.";

/// Waits `secs` seconds (a browser timer).
async fn sleep_secs(secs: u64) {
    let millis = i32::try_from(secs.saturating_mul(1000)).unwrap_or(i32::MAX);
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        if let Some(window) = web_sys::window() {
            let _ = window.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, millis);
        }
    });
    let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
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

    /// Sends one request as the signed-in user; a 429 is waited out, a 401 signs out.
    async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<String>,
    ) -> Result<String, ApiError> {
        let Some(auth) = self.state.auth_untracked() else {
            return Err(ApiError::network("Not signed in."));
        };
        let state = self.state;
        let changes = !matches!(method, Method::GET | Method::POST);
        let result = send_patiently(&auth, method, path, body, &|| {
            state.toast(RATE_LIMITED_NOTE, false);
        })
        .await;
        // An update or a delete of a resource may change its name: the next reference to it
        // fetches the name again.
        if changes && result.is_ok() {
            self.state.forget_name(path);
        }
        match &result {
            Err(error) if error.status == 401 => {
                self.state
                    .sign_out(Some(format!("{SIGNED_OUT_401} {}", error.message)));
            }
            // Refused as not an admin: the role may have changed since sign-in. Who the key
            // acts as is read again, so the pages stop offering what it may no longer do.
            Err(error) if error.status == 403 && path != tunnel_core::paths::ME => {
                let (api, state) = (*self, self.state);
                leptos::task::spawn_local(async move {
                    if let Ok(me) = api.get::<Me>(tunnel_core::paths::ME).await {
                        state.me.try_set(Some(me));
                    }
                });
            }
            _ => {}
        }
        result
    }

    /// Reads an answer's JSON body as `T`.
    pub fn decode<T: DeserializeOwned>(text: &str) -> Result<T, ApiError> {
        serde_json::from_str(text)
            .map_err(|e| ApiError::network(format!("The API's answer could not be read: {e}")))
    }

    fn encode<B: Serialize>(body: &B) -> Result<String, ApiError> {
        serde_json::to_string(body).map_err(|e| ApiError::network(e.to_string()))
    }

    pub async fn get<T: DeserializeOwned>(&self, path: &str) -> Result<T, ApiError> {
        Self::decode(&self.get_text(path).await?)
    }

    /// `GET path`, its body not yet decoded (see [`Api::decode`]).
    pub async fn get_text(&self, path: &str) -> Result<String, ApiError> {
        self.send(Method::GET, path, None).await
    }

    /// A request with a JSON body (create, replace, update), answered with JSON.
    pub async fn send_json<B: Serialize, T: DeserializeOwned>(
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

/// The API client of the current app.
pub fn use_api() -> Api {
    Api::new(use_app())
}

/// [`send_as`], with every 429 waited out (`waiting` called before each wait) and the request
/// sent again, until [`RATE_LIMIT_PATIENCE_SECS`] would be exceeded: then the 429 is the result.
async fn send_patiently(
    auth: &Auth,
    method: Method,
    path: &str,
    body: Option<String>,
    waiting: &dyn Fn(),
) -> Result<String, ApiError> {
    let mut waited = 0;
    loop {
        let result = send_as(auth, method.clone(), path, body.clone()).await;
        let Err(error) = &result else {
            return result;
        };
        let secs = error.retry_after_secs().unwrap_or(1).max(1);
        if error.status != 429 || waited + secs > RATE_LIMIT_PATIENCE_SECS {
            return result;
        }
        waiting();
        sleep_secs(secs).await;
        waited += secs;
    }
}

/// Sends one request with `auth`: the only place headers are set and errors decoded.
async fn send_as(
    auth: &Auth,
    method: Method,
    path: &str,
    body: Option<String>,
) -> Result<String, ApiError> {
    let url = format!("{}{path}", auth.base());
    let builder = RequestBuilder::new(&url)
        .method(method)
        .header("Authorization", &format!("Bearer {}", auth.api_key))
        .header(VERSION_HEADER, SUPPORTED_VERSION);
    let request = match body {
        Some(json) => builder
            .header("Content-Type", "application/json")
            .body(json),
        None => builder.build(),
    }
    .map_err(|e| ApiError::network(format!("Could not build the request: {e}")))?;
    // The browser says no more than "Failed to fetch" (offline, server down, CORS, bad
    // certificate all look alike), so the message says what the user can check.
    let response = request.send().await.map_err(|_| {
        ApiError::network(format!(
            "Cannot reach the server at {}. Check that it is running and that this device is online, then retry.",
            auth.base()
        ))
    })?;
    let status = response.status();
    let text = response.text().await.unwrap_or_default();
    if (200..300).contains(&status) {
        return Ok(text);
    }
    Err(ApiError::from_response(
        status,
        &text,
        response.headers().get(OPERATION_ID_HEADER),
    ))
}

/// Why a sign-in was not accepted, and which field is at fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SignInProblem {
    /// The base URL is not a URL the console can call, or nothing answers there, or what
    /// answers is not this API.
    BaseUrl(String),
    /// The API answered and refused the key.
    ApiKey(String),
}

/// Checks a sign-in before the console is entered: the base URL's form, then one
/// authenticated request (`GET /me`, who the key acts as), so a wrong URL or key is reported on
/// the sign-in screen instead of on every page after it.
pub async fn check_sign_in(auth: &Auth) -> Result<Me, SignInProblem> {
    let base = auth.base();
    let form_ok = (base.starts_with('/') && !base.starts_with("//"))
        || ((base.starts_with("http://") || base.starts_with("https://"))
            && base
                .split("://")
                .nth(1)
                .is_some_and(|rest| !rest.is_empty()));
    if !form_ok || base.chars().any(char::is_whitespace) {
        return Err(SignInProblem::BaseUrl(
            "Enter the API's base URL: a path on this server such as /api, or an address starting with http:// or https://."
                .to_owned(),
        ));
    }
    match send_patiently(auth, Method::GET, tunnel_core::paths::ME, None, &|| {}).await {
        Ok(text) => serde_json::from_str::<Me>(&text).map_err(|_| not_this_api(base)),
        Err(e) if e.status == 0 => Err(SignInProblem::BaseUrl(e.message)),
        Err(e) if e.status == 401 => Err(SignInProblem::ApiKey(format!(
            "The API refused this key: {}",
            e.message
        ))),
        // An answer without the API's error body comes from something else at that address.
        Err(e) if e.body.is_none() => Err(not_this_api(base)),
        Err(e) => Err(SignInProblem::BaseUrl(e.message)),
    }
}

fn not_this_api(base: &str) -> SignInProblem {
    SignInProblem::BaseUrl(format!(
        "The server at {base} answered, but not as the Tunnel Management API: check the base URL (it usually ends in /api)."
    ))
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
