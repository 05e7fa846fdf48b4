//! The JSON response body of the API, [`Json`]: below the errors (`crate::error` writes its
//! bodies with it) and the handlers.

use axum::http::header::CONTENT_TYPE;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

/// A JSON response body: `T` serialized into a `Vec` that serde_json grows itself, then handed
/// to the response without a copy. axum's `Json` writes through a `BytesMut` instead, one call
/// per small piece (each quote, comma, key): that call and the buffer's growing copies were
/// about a tenth of the server's CPU for a list page of 100 (BENCHMARKS.md, closing note).
#[derive(Debug, Clone)]
pub struct Json<T>(pub T);

impl<T: Serialize> IntoResponse for Json<T> {
    fn into_response(self) -> Response {
        match serde_json::to_vec(&self.0) {
            Ok(body) => (
                [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
                body,
            )
                .into_response(),
            // Not met with the API's types (strings, numbers and JSON values, maps keyed by
            // strings); a bare 500, as axum's `Json` answers, since the error body itself is
            // written with this type.
            Err(e) => {
                tracing::error!(error = %e, "cannot write a JSON response");
                StatusCode::INTERNAL_SERVER_ERROR.into_response()
            }
        }
    }
}
