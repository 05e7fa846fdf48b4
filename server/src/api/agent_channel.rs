//! The HTTP side of the agent channel (docs/agent-channel.md): `GET /agent/v1/connect`,
//! outside `/api` and without an API key (the hello carries the authtoken), upgraded to a
//! WebSocket that `agents::channel::serve` then serves.

use crate::agents::channel;
use crate::auth;
use crate::error::ApiError;
use crate::state::AppState;
use axum::Router;
use axum::extract::State;
use axum::extract::ws::WebSocketUpgrade;
use axum::http::Extensions;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use tunnel_core::errors::ErrorCode;
use tunnel_core::limits::MAX_AGENT_MESSAGE_BYTES;
use tunnel_core::paths::AGENT_CONNECT;

/// What each connection reads into at a time. tungstenite's default (128 KiB, allocated when
/// the connection opens) was 26 of the 33 MB the server's heap held with 200 agents connected
/// (a heap profile of `cargo xtask soak`): agents send a hello and short answers, so a small
/// buffer costs nothing, and a larger message (up to [`MAX_AGENT_MESSAGE_BYTES`]) still arrives
/// whole, read in several steps.
const READ_BUFFER_BYTES: usize = 8 * 1024;

/// The route of the agent channel, merged next to `/api` rather than under it.
pub fn router() -> Router<AppState> {
    Router::new().route(AGENT_CONNECT, get(connect))
}

async fn connect(
    State(state): State<AppState>,
    extensions: Extensions,
    ws: WebSocketUpgrade,
) -> Response {
    // The peer address is there when the server is served with connect info (as `serve` and
    // the socket tests do); in-process router tests have no peer.
    let peer = auth::peer_ip(&extensions);
    // Paced per address before anything is taken: a host whose agents all reconnect at once
    // gets a 429 with the wait, which the agent honours.
    if let Some(Err(refusal)) = peer.map(|ip| state.limits.agent_connect(ip)) {
        return auth::refused(refusal);
    }
    // Taken before the upgrade, so a refused connection never becomes a WebSocket.
    let Some(slot) = state.registry.hello_slot() else {
        return too_many_waiting();
    };
    let ip = peer.map_or_else(|| "unknown".to_owned(), |ip| ip.to_string());
    let link = state.sessions();
    // The frame bound too: a single frame may otherwise be up to 16 MiB (the default) before
    // the message bound is even looked at.
    ws.max_message_size(MAX_AGENT_MESSAGE_BYTES)
        .max_frame_size(MAX_AGENT_MESSAGE_BYTES)
        .read_buffer_size(READ_BUFFER_BYTES)
        .on_upgrade(move |socket| {
            let registry = link.registry.clone();
            registry.track(channel::serve(link, socket, ip, slot))
        })
}

/// 503 with the API's JSON error body and its own code.
fn too_many_waiting() -> Response {
    ApiError::new(ErrorCode::AgentsBusy, ErrorCode::AgentsBusy.title()).into_response()
}
