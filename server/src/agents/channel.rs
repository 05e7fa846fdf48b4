//! The agent channel, server side: `GET /agent/v1/connect` upgraded to a WebSocket.
//!
//! One task per connection: it waits for the hello, checks the authtoken (credential token hash)
//! and every bind against the credential's ACL with `tunnel-core` matching, then either refuses
//! (one `Refused` frame with the error code and reason, then close) or opens a session `ts_…`
//! in the registry and serves it: commands from the API go out as `Command` frames and come back
//! as `Ack`s matched by `command_id`; pings keep the link alive and detect dead peers. Whatever
//! ends the connection removes the session at once (DESIGN §7).

use super::registry::{Control, LiveSession};
use crate::state::AppState;
use axum::Router;
use axum::extract::State;
use axum::extract::connect_info::ConnectInfo;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::http::Extensions;
use axum::response::Response;
use axum::routing::get;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::Instant;
use tokio::sync::{mpsc, oneshot};
use tunnel_core::acl::{Acl, Bind};
use tunnel_core::agent_protocol::{AgentMessage, Hello, Refusal, ServerMessage};
use tunnel_core::errors::ErrorCode;
use tunnel_core::ids::IdKind;
use tunnel_core::limits::OTHER_METADATA;
use tunnel_core::paths::AGENT_CONNECT;
use tunnel_core::resources::Ref;
use tunnel_core::resources::tunnel_session::{AgentCommand, TunnelSession};
use tunnel_core::version::Version;

/// The transport every session of this channel reports.
pub const TRANSPORT: &str = "tunnel/v2";
/// A hello is small; anything near this is not an agent.
const MAX_MESSAGE_BYTES: usize = 64 * 1024;
/// Most binds one agent may ask for.
const MAX_BINDS: usize = 100;
/// Silent heartbeat intervals after which the peer counts as gone.
const SILENT_HEARTBEATS: u32 = 3;

/// The route of the agent channel (outside `/api`, no API key: the hello carries the token).
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
    let ip = extensions
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(addr)| addr.ip().to_canonical().to_string())
        .unwrap_or_else(|| "unknown".to_owned());
    ws.max_message_size(MAX_MESSAGE_BYTES)
        .on_upgrade(move |socket| serve(state, socket, ip))
}

fn encode(msg: &ServerMessage) -> Message {
    // Our own enum of strings and numbers always serialises.
    Message::text(serde_json::to_string(msg).unwrap_or_default())
}

/// Sends a refusal and closes; errors are moot, the connection is going away.
async fn refuse(mut socket: WebSocket, code: ErrorCode, msg: String) {
    tracing::info!(error_code = code.as_str(), %msg, "agent refused");
    let _ = socket
        .send(encode(&ServerMessage::Refused {
            error_code: code.as_str().to_owned(),
            msg,
        }))
        .await;
    let _ = socket.send(Message::Close(None)).await;
}

/// Waits for the hello (text frames only; pings are answered by the WebSocket layer).
async fn read_hello(
    socket: &mut WebSocket,
    state: &AppState,
) -> Result<Hello, (ErrorCode, String)> {
    let invalid = |msg: String| (ErrorCode::InvalidHello, msg);
    let deadline = tokio::time::Instant::now() + state.registry.timings().hello_timeout;
    loop {
        let next = tokio::time::timeout_at(deadline, socket.recv())
            .await
            .map_err(|_| invalid("No hello was received in time.".to_owned()))?;
        match next {
            Some(Ok(Message::Text(text))) => {
                return match serde_json::from_str::<AgentMessage>(text.as_str()) {
                    Ok(AgentMessage::Hello(hello)) => Ok(hello),
                    Ok(_) => Err(invalid("The first message must be a hello.".to_owned())),
                    Err(e) => Err(invalid(format!("The hello is not valid: {e}."))),
                };
            }
            Some(Ok(Message::Binary(_))) => {
                return Err(invalid("The hello must be a JSON text frame.".to_owned()));
            }
            Some(Ok(_)) => continue,
            Some(Err(_)) | None => {
                return Err(invalid("The connection closed before a hello.".to_owned()));
            }
        }
    }
}

/// The hello's own consistency, before the token is looked at.
fn check_hello(hello: &Hello) -> Result<Vec<Bind>, String> {
    if Version::parse(&hello.agent_version).is_none() {
        return Err(format!(
            "agent_version `{}` is not of the form MAJOR.MINOR.PATCH.",
            hello.agent_version.chars().take(32).collect::<String>()
        ));
    }
    if hello.os.trim().is_empty() || hello.os.len() > 64 {
        return Err("os must name the agent's operating system in at most 64 bytes.".to_owned());
    }
    if let Some(e) = OTHER_METADATA.check(&hello.metadata) {
        return Err(e.message);
    }
    if hello.binds.len() > MAX_BINDS {
        return Err(format!("At most {MAX_BINDS} binds may be requested."));
    }
    hello
        .binds
        .iter()
        .map(|b| Bind::parse(b).map_err(|e| format!("Bind `{b}`: {e}.")))
        .collect()
}

/// Serves one connection from upgrade to close.
async fn serve(state: AppState, mut socket: WebSocket, ip: String) {
    let hello = match read_hello(&mut socket, &state).await {
        Ok(hello) => hello,
        Err((code, msg)) => return refuse(socket, code, msg).await,
    };
    let binds = match check_hello(&hello) {
        Ok(binds) => binds,
        Err(msg) => return refuse(socket, ErrorCode::InvalidHello, msg).await,
    };
    let credential = match state.store.authenticate_authtoken(&hello.authtoken).await {
        Ok(Some(credential)) => credential,
        Ok(None) => {
            let msg = "The authtoken is unknown or its credential was deleted.".to_owned();
            return refuse(socket, ErrorCode::AgentAuthFailed, msg).await;
        }
        Err(e) => {
            tracing::error!(error = %e, "authtoken lookup failed");
            let msg = "The server could not check the authtoken; try again later.".to_owned();
            return refuse(socket, ErrorCode::Internal, msg).await;
        }
    };
    // A stored ACL was validated when it was written; one that no longer parses permits nothing.
    let acl = Acl::parse(&credential.acl).ok();
    for bind in &binds {
        if !acl.as_ref().is_some_and(|acl| acl.check(bind).is_allowed()) {
            let msg = format!("The credential's ACL does not permit binding `{bind}`.");
            return refuse(socket, ErrorCode::BindNotPermitted, msg).await;
        }
    }

    let (id, started_at) = state.store.mint(IdKind::TunnelSession);
    let session = TunnelSession {
        id: id.clone(),
        uri: state.uri(&tunnel_core::paths::tunnel_session(&id)),
        agent_version: hello.agent_version.clone(),
        credential: Ref {
            id: credential.id.clone(),
            uri: state.uri(&tunnel_core::paths::credential(&credential.id)),
        },
        ip,
        metadata: hello.metadata.clone(),
        os: hello.os.clone(),
        region: state.config.region.clone(),
        started_at,
        transport: TRANSPORT.to_owned(),
    };
    let live = LiveSession {
        session,
        account_id: credential.account_id.clone(),
        credential_id: credential.id.clone(),
    };
    let control = state.registry.open(live);
    // A credential deleted between the token check and the registration: its delete removes
    // the row before it closes the credential's sessions, so either it saw this session or the
    // row is already gone now.
    if let Ok(None) = state.store.authenticate_authtoken(&hello.authtoken).await {
        state.registry.remove(&id);
        let msg = format!(
            "The credential {} of this session was deleted.",
            credential.id
        );
        let closed = ServerMessage::Closed {
            error_code: ErrorCode::CredentialDeleted.as_str().to_owned(),
            msg,
        };
        let _ = socket.send(encode(&closed)).await;
        let _ = socket.send(Message::Close(None)).await;
        return;
    }
    tracing::info!(session_id = %id, credential_id = %credential.id, "tunnel session opened");
    if socket
        .send(encode(&ServerMessage::Welcome {
            session_id: id.clone(),
        }))
        .await
        .is_ok()
    {
        hold(&state, &id, socket, control).await;
    }
    state.registry.remove(&id);
    tracing::info!(session_id = %id, "tunnel session closed");
}

/// The open session: relays commands and acknowledgements until either side ends it.
async fn hold(
    state: &AppState,
    id: &str,
    mut socket: WebSocket,
    mut control: mpsc::UnboundedReceiver<Control>,
) {
    let heartbeat_every = state.registry.timings().heartbeat;
    let mut heartbeat = tokio::time::interval(heartbeat_every);
    heartbeat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut last_seen = Instant::now();
    let mut pending: HashMap<u64, (AgentCommand, oneshot::Sender<Result<(), Refusal>>)> =
        HashMap::new();
    let mut next_command_id: u64 = 1;
    loop {
        tokio::select! {
            next = socket.recv() => {
                last_seen = Instant::now();
                match next {
                    Some(Ok(Message::Text(text))) => match serde_json::from_str::<AgentMessage>(text.as_str()) {
                        Ok(AgentMessage::Ack(ack)) => {
                            if let Some((command, reply)) = pending.remove(&ack.command_id) {
                                // An agent that accepted stop or restart is leaving: its session
                                // is gone by the time the API answers 204, not a moment later.
                                if ack.refused.is_none() && command != AgentCommand::Update {
                                    state.registry.remove(id);
                                }
                                // The API caller may have timed out and left: nothing to tell.
                                let _ = reply.send(ack.refused.map_or(Ok(()), Err));
                            }
                        }
                        // A second hello or an unknown message is ignored rather than fatal, so
                        // newer agents can add messages.
                        Ok(AgentMessage::Hello(_)) | Err(_) => {}
                    },
                    Some(Ok(Message::Close(_))) | Some(Err(_)) | None => return,
                    Some(Ok(_)) => {}
                }
            }
            order = control.recv() => match order {
                Some(Control::Command { command, target_version, reply }) => {
                    let command_id = next_command_id;
                    next_command_id += 1;
                    let msg = ServerMessage::Command { command_id, command, target_version };
                    if socket.send(encode(&msg)).await.is_err() {
                        return;
                    }
                    pending.insert(command_id, (command, reply));
                    // Callers that gave up leave closed replies behind; drop them.
                    pending.retain(|_, (_, reply)| !reply.is_closed());
                }
                Some(Control::Close { code, msg }) => {
                    let _ = socket.send(encode(&ServerMessage::Closed { error_code: code.as_str().to_owned(), msg })).await;
                    let _ = socket.send(Message::Close(None)).await;
                    return;
                }
                // The registry forgot this session (removed elsewhere): end the connection.
                None => {
                    let _ = socket.send(Message::Close(None)).await;
                    return;
                }
            },
            _ = heartbeat.tick() => {
                if last_seen.elapsed() > heartbeat_every * SILENT_HEARTBEATS {
                    tracing::info!("agent silent for too long; closing its session");
                    return;
                }
                if socket.send(Message::Ping(Default::default())).await.is_err() {
                    return;
                }
            }
        }
    }
}
