//! OpenAPI document (placeholder replaced below).
use crate::state::AppState;
use axum::Router;
pub fn router() -> Router<AppState> {
    Router::new()
}
