//! The agent channel, agent side: connect to `/agent/v1/connect`, send the hello, hold the
//! session with heartbeats, answer commands, and reconnect with bounded exponential backoff when
//! the link is lost (each reconnect opens a new session, as the server removes a session the
//! moment its connection drops).
//!
//! [`run`] returns only when the process should end or be replaced: stopped, asked to restart,
//! or refused/closed by the server. What to do then (exit, `exec`) is `main`'s business, so the
//! same loop runs in tests.

use crate::config::{Config, connect_url};
use crate::update::{UpdateState, Updater};
use futures_util::{SinkExt, StreamExt};
use std::time::{Duration, Instant};
use tokio_tungstenite::tungstenite::Message;
use tunnel_core::ErrorCode;
use tunnel_core::agent_protocol::{Ack, AgentMessage, Refusal, ServerMessage};
use tunnel_core::resources::tunnel_session::{AgentCommand, is_windows};
use tunnel_core::version::Version;

/// How long the TCP connect, the WebSocket handshake and the server's answer to the hello may
/// take before the attempt counts as failed.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// Missing heartbeats after which the link counts as dead.
const SILENT_HEARTBEATS: u32 = 3;

/// Why [`run`] returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exit {
    /// A stop command was acknowledged: exit with status 0.
    Stopped,
    /// A restart command was acknowledged: re-execute, reporting `updated_version` if an update
    /// completed.
    Restart { updated_version: Option<Version> },
    /// The server refused the hello (bad token, bind outside the ACL, invalid hello) or closed
    /// the session (credential deleted). `error_code` is the server's `ERR_TUNNEL_<n>`.
    Refused { error_code: String, msg: String },
}

/// What happened, for the caller to print or observe (tests read the session ids from it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    Connecting {
        url: String,
    },
    Opened {
        session_id: String,
    },
    /// The link was lost (or could not be made); the agent retries after `retry_in`.
    Lost {
        reason: String,
        retry_in: Duration,
    },
    Command {
        command: AgentCommand,
        refused: Option<Refusal>,
    },
    Updating {
        target: Version,
    },
    Updated {
        target: Version,
    },
}

/// How one connection ended.
enum SessionEnd {
    Exit(Exit),
    /// Lost; `opened` says whether a session had been opened (which resets the backoff).
    Lost {
        reason: String,
        opened: bool,
    },
}

/// Runs sessions until the agent must stop, restart or give up. Never returns on a lost link.
pub async fn run(config: &Config, on_event: &mut (dyn FnMut(Event) + Send)) -> Exit {
    let url = match connect_url(&config.server) {
        Ok(url) => url,
        Err(msg) => {
            return Exit::Refused {
                error_code: String::new(),
                msg,
            };
        }
    };
    // The update machine lives as long as the process: a reconnect does not undo an update.
    let mut updater = Updater::new(config.update_checks, config.update_duration);
    let mut backoff = config.backoff_initial;
    loop {
        on_event(Event::Connecting { url: url.clone() });
        match session(config, &url, &mut updater, on_event).await {
            SessionEnd::Exit(exit) => return exit,
            SessionEnd::Lost { reason, opened } => {
                if opened {
                    backoff = config.backoff_initial;
                }
                let retry_in = jitter(backoff);
                on_event(Event::Lost { reason, retry_in });
                tokio::time::sleep(retry_in).await;
                backoff = (backoff * 2).min(config.backoff_max);
            }
        }
    }
}

/// Up to +25% of the delay, so a fleet of agents cut off together does not reconnect in step.
/// The clock's sub-second nanos are random enough for that and need no RNG dependency.
fn jitter(delay: Duration) -> Duration {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    delay + delay.mul_f64(f64::from(nanos % 1000) / 4000.0)
}

fn lost(reason: impl Into<String>, opened: bool) -> SessionEnd {
    SessionEnd::Lost {
        reason: reason.into(),
        opened,
    }
}

fn encode(msg: &AgentMessage) -> Message {
    // Serialising our own enum of strings and numbers cannot fail.
    Message::text(serde_json::to_string(msg).unwrap_or_default())
}

/// One connection: handshake, hello, then the session until it ends.
async fn session(
    config: &Config,
    url: &str,
    updater: &mut Updater,
    on_event: &mut (dyn FnMut(Event) + Send),
) -> SessionEnd {
    let ws = match tokio::time::timeout(HANDSHAKE_TIMEOUT, tokio_tungstenite::connect_async(url))
        .await
    {
        Ok(Ok((ws, _response))) => ws,
        Ok(Err(e)) => return lost(format!("cannot connect: {e}"), false),
        Err(_) => return lost("cannot connect: timed out", false),
    };
    let (mut tx, mut rx) = ws.split();
    if let Err(e) = tx.send(encode(&AgentMessage::Hello(config.hello()))).await {
        return lost(format!("cannot send hello: {e}"), false);
    }

    // The first server message is the verdict on the hello.
    let session_id = loop {
        let next = match tokio::time::timeout(HANDSHAKE_TIMEOUT, rx.next()).await {
            Ok(next) => next,
            Err(_) => return lost("the server did not answer the hello", false),
        };
        match next {
            Some(Ok(Message::Text(text))) => match serde_json::from_str::<ServerMessage>(&text) {
                Ok(ServerMessage::Welcome { session_id }) => break session_id,
                // The server's own trouble is worth waiting out; a verdict on the agent is not.
                Ok(ServerMessage::Refused { error_code, msg })
                    if error_code == ErrorCode::Internal.as_str() =>
                {
                    return lost(
                        format!("the server could not open the session: {msg}"),
                        false,
                    );
                }
                Ok(
                    ServerMessage::Refused { error_code, msg }
                    | ServerMessage::Closed { error_code, msg },
                ) => {
                    return SessionEnd::Exit(Exit::Refused { error_code, msg });
                }
                Ok(other) => {
                    return lost(
                        format!("unexpected message before welcome: {other:?}"),
                        false,
                    );
                }
                Err(e) => return lost(format!("unreadable message from the server: {e}"), false),
            },
            Some(Ok(Message::Close(_))) | None => {
                return lost("the server closed the connection", false);
            }
            Some(Ok(_)) => continue, // pings and pongs
            Some(Err(e)) => return lost(format!("connection error: {e}"), false),
        }
    };
    on_event(Event::Opened { session_id });

    let mut heartbeat = tokio::time::interval(config.heartbeat);
    heartbeat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut last_seen = Instant::now();
    loop {
        // The update completes on its own; a timer only makes its completion visible promptly.
        let update_done = updater.deadline();
        tokio::select! {
            next = rx.next() => {
                last_seen = Instant::now();
                let text = match next {
                    Some(Ok(Message::Text(text))) => text,
                    Some(Ok(Message::Close(_))) | None => return lost("the server closed the connection", true),
                    Some(Ok(_)) => continue,
                    Some(Err(e)) => return lost(format!("connection error: {e}"), true),
                };
                let msg = match serde_json::from_str::<ServerMessage>(&text) {
                    Ok(msg) => msg,
                    // A newer server may send messages this agent does not know: ignore them.
                    Err(_) => continue,
                };
                match msg {
                    ServerMessage::Command { command_id, command, target_version } => {
                        let (refused, exit) = decide(config, updater, command, target_version.as_deref());
                        on_event(Event::Command { command, refused });
                        if let (AgentCommand::Update, None) = (command, refused)
                            && let UpdateState::Updating { target, .. } = updater.state(Instant::now())
                        {
                            on_event(Event::Updating { target: *target });
                        }
                        if let Err(e) = tx.send(encode(&AgentMessage::Ack(Ack { command_id, refused }))).await {
                            return lost(format!("cannot acknowledge: {e}"), true);
                        }
                        if let Some(exit) = exit {
                            // Close politely so the server removes the session at once; a failure
                            // here changes nothing, the process is going away anyway.
                            let _ = tx.send(Message::Close(None)).await;
                            let _ = tokio::time::timeout(Duration::from_secs(1), async {
                                while let Some(Ok(_)) = rx.next().await {}
                            }).await;
                            return SessionEnd::Exit(exit);
                        }
                    }
                    ServerMessage::Closed { error_code, msg } | ServerMessage::Refused { error_code, msg } => {
                        return SessionEnd::Exit(Exit::Refused { error_code, msg });
                    }
                    ServerMessage::Welcome { .. } => {}
                }
            }
            _ = heartbeat.tick() => {
                if last_seen.elapsed() > config.heartbeat * SILENT_HEARTBEATS {
                    return lost("no heartbeat from the server", true);
                }
                if let Err(e) = tx.send(Message::Ping(Vec::new().into())).await {
                    return lost(format!("connection error: {e}"), true);
                }
            }
            _ = sleep_until(update_done), if update_done.is_some() => {
                if let Some(target) = updater.pending_version(Instant::now()) {
                    on_event(Event::Updated { target });
                }
            }
        }
    }
}

async fn sleep_until(deadline: Option<Instant>) {
    if let Some(deadline) = deadline {
        tokio::time::sleep_until(deadline.into()).await;
    }
}

/// The agent's answer to one command: a refusal, or acceptance and possibly the end of the
/// process.
fn decide(
    config: &Config,
    updater: &mut Updater,
    command: AgentCommand,
    target: Option<&str>,
) -> (Option<Refusal>, Option<Exit>) {
    let now = Instant::now();
    match command {
        AgentCommand::Stop => (None, Some(Exit::Stopped)),
        AgentCommand::Restart if is_windows(&config.os) => {
            (Some(Refusal::RestartUnsupported), None)
        }
        AgentCommand::Restart => (
            None,
            Some(Exit::Restart {
                updated_version: updater.pending_version(now),
            }),
        ),
        AgentCommand::Update => match updater.request(target, now) {
            Ok(_) => (None, None),
            Err(refusal) => (Some(refusal), None),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(
        config: &Config,
        updater: &mut Updater,
        command: AgentCommand,
        target: Option<&str>,
    ) -> (Option<Refusal>, Option<Exit>) {
        decide(config, updater, command, target)
    }

    #[test]
    fn commands_are_decided_by_os_and_update_state() {
        let mut config = Config::new("http://127.0.0.1:1", "t");
        config.update_duration = Duration::from_secs(60);
        let mut updater = Updater::new(true, config.update_duration);
        assert_eq!(
            answer(&config, &mut updater, AgentCommand::Stop, None),
            (None, Some(Exit::Stopped))
        );
        assert_eq!(
            answer(&config, &mut updater, AgentCommand::Restart, None),
            (
                None,
                Some(Exit::Restart {
                    updated_version: None
                })
            )
        );
        assert_eq!(
            answer(&config, &mut updater, AgentCommand::Update, Some("9.0.1")),
            (None, None)
        );
        assert_eq!(
            answer(&config, &mut updater, AgentCommand::Update, Some("9.0.1")),
            (Some(Refusal::UpdateInProgress), None)
        );
        config.os = "Windows Server 2022".into();
        assert_eq!(
            answer(&config, &mut updater, AgentCommand::Restart, None),
            (Some(Refusal::RestartUnsupported), None)
        );
    }

    #[test]
    fn jitter_stays_within_a_quarter() {
        let d = Duration::from_millis(400);
        let j = jitter(d);
        assert!(j >= d && j <= d + d / 4, "{j:?}");
    }
}
