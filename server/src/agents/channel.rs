//! The agent channel, server side: what happens on a WebSocket once `GET /agent/v1/connect` was
//! upgraded (the upgrade itself is an HTTP route of `api::agent_channel`, which hands the
//! socket to [`serve`]).
//!
//! One task per connection: it waits for the hello, checks the authtoken (credential token hash)
//! and every bind against the credential's ACL (docs/acl.md) with `tunnel-core` matching, then
//! either refuses (one `Refused` frame with the error code and reason, then close) or opens a
//! session `ts_…` in this node's registry and in the directory every node lists from
//! (`store::sessions`), with the update target the server picks for it once and for all, and
//! serves it: commands from the API go out as `Command` frames and come back as `Ack`s matched
//! by `command_id`; the agent's update reports (`UpdateState`) go to the registry, which holds
//! restarts back while an update is applied and shortly after; pings keep the link alive and
//! detect dead peers. Whatever ends the connection removes the session at once
//! (docs/agent-channel.md), or as soon as the database takes the write ([`end_later`]); so does
//! this node losing its cluster membership (docs/cluster.md).
//!
//! A session's start and end are recorded in the audit log (`tunnel_session_started.v0`, by the
//! agent; `tunnel_session_ended.v0` with the reason and whoever caused it: the caller of an
//! accepted stop or restart, of a credential's deletion or ACL change; the agent when it left;
//! the system when the link died), each in the transaction that adds the session to the
//! directory or removes it, so a session removed twice (by its node, and with a dead node) ends
//! once.
//!
//! Bounds, so one misbehaving peer cannot hold server resources: messages and frames are capped at
//! `tunnel_core::limits::MAX_AGENT_MESSAGE_BYTES` (by the upgrade); at most
//! `Timings::max_pending_hellos` connections may wait for their hello (further upgrades get a 503);
//! every write to the agent has a time limit, so an agent that stops reading loses its session
//! instead of blocking its task (and with it the heartbeats that would have noticed).

use super::access::acl_refusal;
use super::commands::session_update_target;
use super::journal;
use super::registry::{Control, LiveSession};
use super::sessions::{Sessions, ended_reason};
use super::updates::UpdateProgress;
use crate::store::{Cause, NewEvent, SessionRow, unix_ms};
use axum::extract::ws::{CloseFrame, Message, WebSocket, close_code};
use std::collections::HashMap;
use std::time::{Duration, Instant};
use tokio::sync::{OwnedSemaphorePermit, mpsc, oneshot};
use tunnel_core::agent_protocol::{AgentMessage, Hello, Refusal, ServerMessage};
use tunnel_core::errors::ErrorCode;
use tunnel_core::ids::IdKind;
use tunnel_core::resources::event::Actor;
use tunnel_core::resources::tunnel_session::{AgentCommand, TunnelSession};
use tunnel_core::resources::{Ref, Validate};

/// The transport every session of this channel reports.
pub const TRANSPORT: &str = "tunnel/v2";
/// Silent heartbeat intervals after which the peer counts as gone.
const SILENT_HEARTBEATS: u32 = 3;

/// The write to the agent did not complete (error or time limit): the session is lost.
struct SendFailed;

/// One write to the agent, bounded by `limit` (see the module comment).
async fn send(socket: &mut WebSocket, msg: Message, limit: Duration) -> Result<(), SendFailed> {
    match tokio::time::timeout(limit, socket.send(msg)).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(_)) => Err(SendFailed),
        Err(_) => {
            tracing::info!("agent stopped reading; closing its session");
            Err(SendFailed)
        }
    }
}

fn encode(msg: &ServerMessage) -> Message {
    // Our own enum of strings and numbers always serialises.
    Message::text(serde_json::to_string(msg).unwrap_or_default())
}

/// Sends a refusal and closes; errors are moot, the connection is going away.
async fn refuse(channel: &Sessions, mut socket: WebSocket, ip: &str, code: ErrorCode, msg: String) {
    // Debug, quoted and escaped: the message may hold what the client sent (a bind, a
    // version), which must not start lines of its own in the log or reach a terminal raw.
    tracing::info!(error_code = code.as_str(), ip = %ip, ?msg, "agent refused");
    let limit = channel.registry.timings().send_timeout;
    let refused = ServerMessage::Refused {
        error_code: code.as_str().to_owned(),
        msg,
    };
    farewell(&mut socket, &refused, limit).await;
}

/// How long a closing connection waits for the agent's own Close frame.
const CLOSE_WAIT: Duration = Duration::from_secs(2);

/// Sends the agent its verdict (`Refused` or `Closed`) and closes the connection with the
/// WebSocket closing handshake: the socket is dropped only once the agent answered Close (or
/// after [`CLOSE_WAIT`]). Dropping it at once while a frame of the agent (a heartbeat ping) is
/// still unread makes the kernel reset the connection, and a reset can discard the verdict
/// before the agent reads it: the agent would then see a lost connection and reconnect instead
/// of exiting with the verdict's code.
async fn farewell(socket: &mut WebSocket, verdict: &ServerMessage, limit: Duration) {
    if send(socket, encode(verdict), limit).await.is_err()
        || send(socket, Message::Close(None), limit).await.is_err()
    {
        return;
    }
    let _ = tokio::time::timeout(CLOSE_WAIT, async {
        while let Some(Ok(message)) = socket.recv().await {
            if matches!(message, Message::Close(_)) {
                break;
            }
        }
    })
    .await;
}

/// Closes the connection with "going away" (1001), which the agent takes as a lost link: it
/// reconnects. Errors are moot, the connection is going away.
async fn close_going_away(socket: &mut WebSocket, limit: Duration) {
    let frame = CloseFrame {
        code: close_code::AWAY,
        reason: "".into(),
    };
    let _ = send(socket, Message::Close(Some(frame)), limit).await;
}

/// Waits for the hello (text frames only; pings are answered by the WebSocket layer).
async fn read_hello(
    socket: &mut WebSocket,
    channel: &Sessions,
) -> Result<Hello, (ErrorCode, String)> {
    let invalid = |msg: String| (ErrorCode::InvalidHello, msg);
    let deadline = tokio::time::Instant::now() + channel.registry.timings().hello_timeout;
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

/// The hello's own consistency (core's rules, the same the agent checks at start-up), before
/// the token is looked at: every problem, one sentence.
fn check_hello(hello: &Hello) -> Result<(), String> {
    let errors = hello.field_errors();
    if errors.is_empty() {
        return Ok(());
    }
    let messages: Vec<String> = errors.into_iter().map(|e| e.message).collect();
    Err(format!("{}.", messages.join("; ")))
}

/// Serves one connection from upgrade to close. `slot` is this connection's place among those
/// waiting for a hello: released as soon as the hello is read.
pub async fn serve(
    channel: Sessions,
    mut socket: WebSocket,
    ip: String,
    slot: OwnedSemaphorePermit,
) {
    let hello = read_hello(&mut socket, &channel).await;
    drop(slot);
    let hello = match hello {
        Ok(hello) => hello,
        Err((code, msg)) => return refuse(&channel, socket, &ip, code, msg).await,
    };
    if let Err(msg) = check_hello(&hello) {
        return refuse(&channel, socket, &ip, ErrorCode::InvalidHello, msg).await;
    }
    let binds = hello.parsed_binds();
    let credential = match channel.store.authenticate_authtoken(&hello.authtoken).await {
        Ok(Some(credential)) => credential,
        Ok(None) => {
            let msg = "The authtoken is unknown or its credential was deleted.".to_owned();
            return refuse(&channel, socket, &ip, ErrorCode::AgentAuthFailed, msg).await;
        }
        Err(e) => {
            tracing::error!(error = %e, "authtoken lookup failed");
            let msg = "The server could not check the authtoken; try again later.".to_owned();
            return refuse(&channel, socket, &ip, ErrorCode::Internal, msg).await;
        }
    };
    if let Some((code, msg)) = acl_refusal(&credential.acl, &binds) {
        return refuse(&channel, socket, &ip, code, msg).await;
    }

    let (id, started_at) = channel.store.mint(IdKind::TunnelSession);
    let session = TunnelSession {
        id: id.clone(),
        uri: channel.config.uri(&tunnel_core::paths::tunnel_session(&id)),
        agent_version: hello.agent_version.clone(),
        credential: Ref {
            id: credential.id.clone(),
            uri: channel
                .config
                .uri(&tunnel_core::paths::credential(&credential.id)),
        },
        ip,
        metadata: hello.metadata.clone(),
        os: hello.os.clone(),
        region: channel.config.region.clone(),
        started_at,
        transport: TRANSPORT.to_owned(),
        agent_update_target: session_update_target(
            &hello.agent_version,
            hello.update_checks,
            &channel.config.agent_latest,
        ),
        agent_update_checks: hello.update_checks,
        // Known only once the agent reports it over the channel.
        agent_update_state: None,
    };
    let shown = session.clone();
    let account = credential.account_id.clone();
    let row = SessionRow {
        session: session.clone(),
        account_id: account.clone(),
        credential_id: credential.id.clone(),
        node_id: channel.node.id.clone(),
        binds: binds.iter().map(ToString::to_string).collect(),
        update_state: None,
    };
    let live = LiveSession {
        session,
        account_id: account.clone(),
        credential_id: credential.id.clone(),
        binds: binds.clone(),
    };
    // Here first, then in the directory: a command routed here as soon as another node can
    // see the session finds its connection.
    let mut control = channel.registry.open(live);
    let agent = Cause {
        actor: Actor::agent(&credential.id),
        operation_id: None,
    };
    if let Err(e) = channel
        .store
        .open_session(&row, journal::started(&shown, agent.clone()))
        .await
    {
        channel.registry.remove(&id);
        tracing::error!(error = %e, "cannot register a tunnel session");
        let msg = "The server could not register the session; try again later.".to_owned();
        return refuse(&channel, socket, &shown.ip, ErrorCode::Internal, msg).await;
    }
    let limit = channel.registry.timings().send_timeout;
    // A credential deleted, or its ACL narrowed, between the token check and the registration:
    // the delete and the PATCH write the row before they look for the credential's sessions in
    // the directory, so either they saw this session or the row read now is already the new one.
    let verdict = match channel.store.authenticate_authtoken(&hello.authtoken).await {
        Ok(None) => Some((
            ErrorCode::CredentialDeleted,
            format!(
                "The credential {} of this session was deleted.",
                credential.id
            ),
        )),
        Ok(Some(now)) => acl_refusal(&now.acl, &binds),
        // The check at hello passed; a failing re-read alone is no reason to refuse.
        Err(_) => None,
    };
    if let Some((code, msg)) = verdict {
        tracing::info!(error_code = code.as_str(), ?msg, "agent refused");
        let ending = Ending::closed(code, Cause::system());
        end(&channel, &account, &shown, ending).await;
        let closed = ServerMessage::Closed {
            error_code: code.as_str().to_owned(),
            msg,
        };
        farewell(&mut socket, &closed, limit).await;
        return;
    }
    tracing::info!(session_id = %id, credential_id = %credential.id, "tunnel session opened");
    let welcome = ServerMessage::Welcome {
        session_id: id.clone(),
    };
    let mut pending = HashMap::new();
    let ending = match send(&mut socket, encode(&welcome), limit).await {
        Ok(()) => {
            hold(
                &channel,
                &account,
                &shown,
                socket,
                &mut control,
                &mut pending,
                &agent,
            )
            .await
        }
        Err(SendFailed) => Ending::lost(),
    };
    let reason = ending.reason;
    end(&channel, &account, &shown, ending).await;
    // Only now do the callers still waiting hear that the session ended: by then it is gone
    // from this node and from the directory, so a listing right after never shows it.
    drop((control, pending));
    tracing::info!(session_id = %id, reason, "tunnel session closed");
}

/// Removes `session` from this node and from the directory, recording its `ended` event there
/// unless it was already removed (by a close, or with this node's membership). An accepted stop
/// or restart is recorded here too, just before the end it caused: the command's own record
/// (`api::tunnel_sessions`) would otherwise race the end, on whichever node sent it.
async fn end(channel: &Sessions, account_id: &str, session: &TunnelSession, ending: Ending) {
    channel.registry.remove(&session.id);
    let mut events = Vec::new();
    if let Some(command) = ending.command {
        let cause = ending.cause.clone();
        events.push(journal::command_requested(
            session, command, cause, "accepted", None,
        ));
    }
    events.push(journal::ended(session, ending.reason, ending.cause));
    let Err(e) = channel
        .store
        .end_session(account_id, &session.id, events.clone())
        .await
    else {
        return;
    };
    if channel.node.has_left() {
        // Shutting down: `Node::leave` ended every session of this node already, and the pool
        // may be closed by now. Nothing is lost, so this is no error.
        tracing::debug!(error = %e, session_id = %session.id, "session end after leaving");
        return;
    }
    // The connection is gone, but the directory still lists the session, and no one else
    // would remove it while this node lives: try again in the background (the write is
    // idempotent: a session already removed gets no second `ended`). The callers waiting on the
    // session hear of its end now; commands to it already find no connection.
    tracing::warn!(error = %e, session_id = %session.id, "cannot record a tunnel session's end yet; trying again");
    tokio::spawn(end_later(
        channel.clone(),
        account_id.to_owned(),
        session.id.clone(),
        events,
    ));
}

/// Delays between the attempts of [`end_later`]: doubling from half a second to half a minute,
/// about ten minutes in all.
fn end_retry_delays() -> impl Iterator<Item = Duration> {
    (0..24).map(|n| Duration::from_millis(500 << n.min(6)).min(Duration::from_secs(30)))
}

/// Records the end of session `id` that [`end`] could not write (the database was unavailable
/// or locked for longer than the busy timeout), retrying until it is written, the node leaves
/// (which ends every session of the node), or the attempts run out.
async fn end_later(channel: Sessions, account_id: String, id: String, events: Vec<NewEvent>) {
    for delay in end_retry_delays() {
        tokio::time::sleep(delay).await;
        if channel.node.has_left() {
            return;
        }
        match channel
            .store
            .end_session(&account_id, &id, events.clone())
            .await
        {
            Ok(_) => {
                tracing::info!(session_id = %id, "tunnel session's end recorded after a retry");
                return;
            }
            Err(e) => tracing::debug!(error = %e, session_id = %id, "session end: retry failed"),
        }
    }
    tracing::error!(
        session_id = %id,
        "cannot record a tunnel session's end; it stays listed until this node leaves or restarts"
    );
}

/// Why a session ended, and on whose behalf.
#[derive(Debug, Clone)]
struct Ending {
    /// `stopped`, `restarted`, `credential_deleted`, `acl_changed` or `disconnected`.
    reason: &'static str,
    cause: Cause,
    /// The accepted stop or restart that ended it.
    command: Option<AgentCommand>,
}

impl Ending {
    /// The link died or went silent: nobody decided it.
    fn lost() -> Ending {
        Ending {
            reason: "disconnected",
            cause: Cause::system(),
            command: None,
        }
    }

    /// What an accepted `command` does to the session.
    fn accepted(command: AgentCommand, cause: Cause) -> Ending {
        let reason = match command {
            AgentCommand::Restart => "restarted",
            _ => "stopped",
        };
        Ending {
            reason,
            cause,
            command: Some(command),
        }
    }

    /// The server closed the session with `code`.
    fn closed(code: ErrorCode, cause: Cause) -> Ending {
        Ending {
            reason: ended_reason(code),
            cause,
            command: None,
        }
    }
}

/// Records the update progress the agent of session `id` reported, stamped with this node's
/// receipt time (no agent clock is trusted): here, for the restart rule, and in the directory,
/// so every node shows it. Awaited before the next message is read, so an acknowledgement that
/// follows a report finds the report recorded.
async fn report_update(
    channel: &Sessions,
    id: &str,
    update: tunnel_core::agent_protocol::UpdateReport,
) {
    let Some(progress) =
        UpdateProgress::from_report(update, unix_ms(time::OffsetDateTime::now_utc()))
    else {
        return;
    };
    channel.registry.report_update(id, progress.clone());
    let json = serde_json::to_string(&progress).unwrap_or_default();
    if let Err(e) = channel.store.set_session_update(id, &json).await {
        tracing::error!(error = %e, session_id = %id, "cannot record an agent's update report");
    }
}

/// A command sent to the agent and not yet acknowledged.
#[derive(Debug)]
struct Pending {
    command: AgentCommand,
    reply: oneshot::Sender<Result<(), Refusal>>,
    cause: Cause,
}

/// The open session: relays commands and acknowledgements until either side ends it, and says
/// why it ended (`agent` is the cause of the agent leaving on its own).
///
/// The replies still pending when it returns (in `pending`, or queued in `control`) are dropped
/// by the caller once the session's end is recorded, which the API reports as "the session
/// ended" (404), never as a timeout.
async fn hold(
    channel: &Sessions,
    account_id: &str,
    session: &TunnelSession,
    mut socket: WebSocket,
    control: &mut mpsc::UnboundedReceiver<Control>,
    pending: &mut HashMap<u64, Pending>,
    agent: &Cause,
) -> Ending {
    let id = session.id.as_str();
    let timings = channel.registry.timings();
    let limit = timings.send_timeout;
    let mut membership = channel.node.membership();
    // A connection that got here after the node left (and after its connections were told to
    // end) would not see that change: it ends now.
    if channel.node.has_left() {
        close_going_away(&mut socket, limit).await;
        return Ending::lost();
    }
    let mut heartbeat = tokio::time::interval(timings.heartbeat);
    heartbeat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut last_seen = Instant::now();
    let mut next_command_id: u64 = 1;
    // Set once the agent accepted stop or restart: it is going away, so nothing more is sent,
    // and this is why the session ends.
    let mut leaving: Option<Ending> = None;
    // The agent closing the link (or it breaking) ends the session: on the command's behalf if
    // it was leaving, on its own otherwise.
    let gone = |leaving: Option<Ending>| {
        leaving.unwrap_or_else(|| Ending {
            reason: "disconnected",
            cause: agent.clone(),
            command: None,
        })
    };
    loop {
        tokio::select! {
            next = socket.recv() => {
                last_seen = Instant::now();
                match next {
                    Some(Ok(Message::Text(text))) => match serde_json::from_str::<AgentMessage>(text.as_str()) {
                        Ok(AgentMessage::Ack(ack)) => {
                            if let Some(Pending { command, reply, cause }) = pending.remove(&ack.command_id) {
                                // An agent that accepted stop or restart is leaving: its session
                                // is gone by the time the API answers 204, not a moment later,
                                // and any other command in flight will never be answered.
                                if ack.refused.is_none() && command != AgentCommand::Update {
                                    let ending = Ending::accepted(command, cause);
                                    end(channel, account_id, session, ending.clone()).await;
                                    // Recorded with the end: not again when the link closes.
                                    leaving = Some(Ending { command: None, ..ending });
                                    pending.clear();
                                }
                                // The API caller may have timed out and left: nothing to tell.
                                let _ = reply.send(ack.refused.map_or(Ok(()), Err));
                            }
                        }
                        Ok(AgentMessage::UpdateState { update }) => {
                            report_update(channel, id, update).await;
                        }
                        // A second hello or an unknown message is ignored rather than fatal, so
                        // newer agents can add messages.
                        Ok(AgentMessage::Hello(_)) | Err(_) => {}
                    },
                    Some(Ok(Message::Close(_))) | Some(Err(_)) | None => return gone(leaving),
                    Some(Ok(_)) => {}
                }
            }
            order = control.recv(), if leaving.is_none() => match order {
                Some(Control::Command { command, target_version, reply, cause }) => {
                    let command_id = next_command_id;
                    next_command_id += 1;
                    let msg = ServerMessage::Command { command_id, command, target_version };
                    if send(&mut socket, encode(&msg), limit).await.is_err() {
                        return Ending::lost();
                    }
                    pending.insert(command_id, Pending { command, reply, cause });
                    // Callers that gave up leave closed replies behind; drop them.
                    pending.retain(|_, p| !p.reply.is_closed());
                }
                Some(Control::Close { code, msg, cause }) => {
                    let closed = ServerMessage::Closed { error_code: code.as_str().to_owned(), msg };
                    farewell(&mut socket, &closed, limit).await;
                    return Ending::closed(code, cause);
                }
                // The registry forgot this session (removed elsewhere): end the connection.
                None => {
                    let _ = send(&mut socket, Message::Close(None), limit).await;
                    return Ending::lost();
                }
            },
            // This node lost its membership, or left (shutting down): the directory no longer
            // lists the session, so the agent must reconnect and register again
            // (`super::cluster`); a Close frame tells it at once.
            _ = membership.changed() => {
                close_going_away(&mut socket, limit).await;
                return Ending::lost();
            }
            _ = heartbeat.tick() => {
                if last_seen.elapsed() > timings.heartbeat * SILENT_HEARTBEATS {
                    tracing::info!("agent silent for too long; closing its session");
                    return Ending::lost();
                }
                if send(&mut socket, Message::Ping(Default::default()), limit).await.is_err() {
                    return gone(leaving);
                }
            }
        }
        if leaving.is_some() {
            // The agent accepted stop or restart and closes the link itself. Commands queued
            // meanwhile are dropped unanswered (the caller hears the session ended) rather than
            // sent to an agent that will never answer them.
            control.close();
            while let Ok(order) = control.try_recv() {
                drop(order);
            }
        }
    }
}
