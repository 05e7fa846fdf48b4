//! The agent channel, agent side: connect to `/agent/v1/connect`, send the hello, hold the
//! session with heartbeats, answer commands, report the update's progress (`UpdateState`), and
//! reconnect with bounded exponential backoff when the link is lost (each reconnect opens a new
//! session, as the server removes a session the moment its connection drops). With several
//! servers (`Config::fallback_servers`), each attempt after a failure goes to the next one.
//!
//! [`run`] returns only when the process should end or be replaced: stopped, asked to restart,
//! or refused/closed by the server (an [`AgentError`]). What to do then (exit, `exec`) is
//! `main`'s business, so the same loop runs in tests.
//!
//! `wss://` goes through [`crate::tls`].
//!
//! Backoff: each failed attempt doubles the delay up to `backoff_max`. It starts over only after
//! a session stayed up for `backoff_max`: a proxy that accepts and then drops every connection
//! must not turn the agent into a reconnect loop at the initial delay.
//!
//! About 420 lines, 80 of them the unit tests of the command decisions and the backoff:
//! the session loop, the decision and the backoff read best next to each other.

use crate::config::{Config, connect_url};
use crate::error::AgentError;
use crate::update::{UpdateState, Updater};
use futures_util::{SinkExt, StreamExt};
use std::time::{Duration, Instant};
use tokio_tungstenite::Connector;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tunnel_core::ErrorCode;
use tunnel_core::agent_protocol::{Ack, AgentMessage, Refusal, ServerMessage};
use tunnel_core::limits::MAX_AGENT_MESSAGE_BYTES;
use tunnel_core::resources::tunnel_session::{AgentCommand, is_windows};
use tunnel_core::version::Version;

/// How long the TCP connect, the WebSocket handshake and the server's answer to the hello may
/// take before the attempt counts as failed.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// Missing heartbeats after which the link counts as dead.
const SILENT_HEARTBEATS: u32 = 3;

/// Why [`run`] returned normally (the server's refusals are [`AgentError::Refused`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exit {
    /// A stop command was acknowledged: exit with status 0.
    Stopped,
    /// A restart command was acknowledged: re-execute, reporting `updated_version` if an update
    /// completed.
    Restart { updated_version: Option<Version> },
}

/// What happened, for the caller to print or observe (tests read the session ids from it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    Connecting {
        /// The address tried, a password in it shown as `***`.
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
    Exit(Result<Exit, AgentError>),
    /// Lost; `up_for` is how long a session had been open, if one was; `wait` is the least
    /// wait the server asked for (`Retry-After` on a refused connection).
    Lost {
        reason: String,
        up_for: Option<Duration>,
        wait: Option<Duration>,
    },
}

/// Runs sessions until the agent must stop, restart or give up. Never returns on a lost link.
pub async fn run(
    config: &Config,
    on_event: &mut (dyn FnMut(Event) + Send),
) -> Result<Exit, AgentError> {
    config.validate()?;
    let urls = config
        .servers()
        .map(|s| connect_url(s))
        .collect::<Result<Vec<String>, AgentError>>()?;
    let connector = if urls.iter().any(|u| u.starts_with("wss://")) {
        Some(crate::tls::connector()?)
    } else {
        None
    };
    // The update machine lives as long as the process: a reconnect does not undo an update.
    let mut updater = Updater::new(
        config.update_checks,
        config.update_duration,
        Version::parse(&config.version),
    );
    let mut backoff = config.backoff_initial;
    // With several servers, each lost link or failed connection moves on to the next one: a
    // node that died is left at once, and every node is tried before the list starts over.
    let mut attempt = 0;
    loop {
        let url = &urls[attempt % urls.len()];
        attempt += 1;
        on_event(Event::Connecting {
            url: crate::config::shown_url(url),
        });
        match session(config, url, connector.clone(), &mut updater, on_event).await {
            SessionEnd::Exit(exit) => return exit,
            SessionEnd::Lost {
                reason,
                up_for,
                wait,
            } => {
                let delay = retry_delay(config, backoff, up_for);
                // Never sooner than the server asked: a paced reconnect storm would otherwise
                // come straight back.
                let retry_in = jitter(delay.max(wait.unwrap_or_default()));
                on_event(Event::Lost { reason, retry_in });
                tokio::time::sleep(retry_in).await;
                backoff = (delay * 2).min(config.backoff_max);
            }
        }
    }
}

/// The delay before this attempt (before jitter): the running `backoff`, or the initial delay
/// again if the session that just ended had stayed up for at least `backoff_max`.
fn retry_delay(config: &Config, backoff: Duration, up_for: Option<Duration>) -> Duration {
    if up_for.is_some_and(|up| up >= config.backoff_max) {
        config.backoff_initial
    } else {
        backoff
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

fn lost(reason: impl Into<String>, opened_at: Option<Instant>) -> SessionEnd {
    SessionEnd::Lost {
        reason: reason.into(),
        up_for: opened_at.map(|at| at.elapsed()),
        wait: None,
    }
}

/// The wait a refused WebSocket handshake asks for: its `Retry-After` in seconds, on a 429 or
/// 503 (the server's rate limit on agent connections, or its hello queue being full).
fn retry_after(error: &tokio_tungstenite::tungstenite::Error) -> Option<Duration> {
    let tokio_tungstenite::tungstenite::Error::Http(response) = error else {
        return None;
    };
    if !matches!(response.status().as_u16(), 429 | 503) {
        return None;
    }
    let secs: u64 = response
        .headers()
        .get("retry-after")?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()?;
    // A server asking for more than an hour is not believed past the hour.
    Some(Duration::from_secs(secs.min(3600)))
}

/// Why a handshake failed, in words: an answer that is not the agent channel's at all (a page,
/// a 404 of the API-only listener, another service) most likely means a wrong `--server`.
fn handshake_failure(error: &tokio_tungstenite::tungstenite::Error) -> String {
    match error {
        tokio_tungstenite::tungstenite::Error::Http(response)
            if !matches!(response.status().as_u16(), 429 | 500..) =>
        {
            format!(
                "cannot connect: the server answered {} instead of opening the agent channel; \
                 check that --server is the server's address (its main listener, not the API alone)",
                response.status()
            )
        }
        tokio_tungstenite::tungstenite::Error::Io(io) => match io
            .get_ref()
            .and_then(|inner| inner.downcast_ref::<rustls::Error>())
        {
            // What a plain-text server's HTTP answer looks like to TLS.
            Some(rustls::Error::InvalidMessage(_)) => "cannot connect: the server did not answer \
                 in TLS; if it serves plain text, give --server as http://"
                .to_owned(),
            Some(rustls::Error::InvalidCertificate(why)) => certificate_refused(why),
            _ => format!("cannot connect: {io}"),
        },
        e => format!("cannot connect: {e}"),
    }
}

/// Why the server's certificate was refused, and where to look: the advice differs (a CA to
/// trust, the address, the dates).
fn certificate_refused(why: &rustls::CertificateError) -> String {
    use rustls::CertificateError as E;
    let advice = match why {
        E::NotValidForName | E::NotValidForNameContext { .. } => {
            "it is not for the host in --server: give the name the certificate is for"
        }
        E::Expired | E::ExpiredContext { .. } | E::NotValidYet | E::NotValidYetContext { .. } => {
            "it is outside its dates: renew it, or check this machine's clock"
        }
        _ => "for a self-hosted CA, point SSL_CERT_FILE at its PEM certificate",
    };
    format!("cannot connect: the server's TLS certificate is refused ({why:?}); {advice}")
}

fn refused(error_code: String, msg: String) -> SessionEnd {
    SessionEnd::Exit(Err(AgentError::Refused { error_code, msg }))
}

fn encode(msg: &AgentMessage) -> Message {
    // Serialising our own enum of strings and numbers cannot fail.
    Message::text(serde_json::to_string(msg).unwrap_or_default())
}

/// One connection: handshake, hello, then the session until it ends.
async fn session(
    config: &Config,
    url: &str,
    connector: Option<Connector>,
    updater: &mut Updater,
    on_event: &mut (dyn FnMut(Event) + Send),
) -> SessionEnd {
    // The server's messages are as small as the agent's: the same bound both ways.
    let ws_config = WebSocketConfig::default()
        .max_message_size(Some(MAX_AGENT_MESSAGE_BYTES))
        .max_frame_size(Some(MAX_AGENT_MESSAGE_BYTES));
    let connect =
        tokio_tungstenite::connect_async_tls_with_config(url, Some(ws_config), true, connector);
    let ws = match tokio::time::timeout(HANDSHAKE_TIMEOUT, connect).await {
        Ok(Ok((ws, _response))) => ws,
        Ok(Err(e)) => {
            let wait = retry_after(&e);
            return SessionEnd::Lost {
                reason: handshake_failure(&e),
                up_for: None,
                wait,
            };
        }
        Err(_) => return lost("cannot connect: timed out", None),
    };
    let (mut tx, mut rx) = ws.split();
    if let Err(e) = tx.send(encode(&AgentMessage::Hello(config.hello()))).await {
        return lost(format!("cannot send hello: {e}"), None);
    }

    // The first server message is the verdict on the hello.
    let session_id = loop {
        let next = match tokio::time::timeout(HANDSHAKE_TIMEOUT, rx.next()).await {
            Ok(next) => next,
            Err(_) => return lost("the server did not answer the hello", None),
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
                        None,
                    );
                }
                Ok(
                    ServerMessage::Refused { error_code, msg }
                    | ServerMessage::Closed { error_code, msg },
                ) => {
                    return refused(error_code, msg);
                }
                Ok(other) => {
                    return lost(
                        format!("unexpected message before welcome: {other:?}"),
                        None,
                    );
                }
                Err(e) => return lost(format!("unreadable message from the server: {e}"), None),
            },
            Some(Ok(Message::Close(_))) | None => {
                return lost("the server closed the connection", None);
            }
            Some(Ok(_)) => continue, // pings and pongs
            Some(Err(e)) => return lost(format!("connection error: {e}"), None),
        }
    };
    on_event(Event::Opened { session_id });
    let opened_at = Some(Instant::now());
    // A session opened mid-update (a reconnect): the new session's server state starts empty.
    if let Err(e) = report_update(&mut tx, updater).await {
        return lost(format!("cannot report the update: {e}"), opened_at);
    }

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
                    Some(Ok(Message::Close(_))) | None => return lost("the server closed the connection", opened_at),
                    Some(Ok(_)) => continue,
                    Some(Err(e)) => return lost(format!("connection error: {e}"), opened_at),
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
                        if let (AgentCommand::Update, None) = (command, refused) {
                            // Before the ack: the server knows the update runs by the time the
                            // API answers 204, so no restart can slip in between.
                            if let Err(e) = report_update(&mut tx, updater).await {
                                return lost(format!("cannot report the update: {e}"), opened_at);
                            }
                            if let UpdateState::Updating { target, .. } = updater.state(Instant::now()) {
                                on_event(Event::Updating { target: *target });
                            }
                        }
                        if let Err(e) = tx.send(encode(&AgentMessage::Ack(Ack { command_id, refused }))).await {
                            return lost(format!("cannot acknowledge: {e}"), opened_at);
                        }
                        if let Some(exit) = exit {
                            // Close politely so the server removes the session at once; a failure
                            // here changes nothing, the process is going away anyway.
                            let _ = tx.send(Message::Close(None)).await;
                            let _ = tokio::time::timeout(Duration::from_secs(1), async {
                                while let Some(Ok(_)) = rx.next().await {}
                            }).await;
                            return SessionEnd::Exit(Ok(exit));
                        }
                    }
                    ServerMessage::Closed { error_code, msg } | ServerMessage::Refused { error_code, msg } => {
                        return refused(error_code, msg);
                    }
                    ServerMessage::Welcome { .. } => {}
                }
            }
            _ = heartbeat.tick() => {
                if last_seen.elapsed() > config.heartbeat * SILENT_HEARTBEATS {
                    return lost("no heartbeat from the server", opened_at);
                }
                if let Err(e) = tx.send(Message::Ping(Vec::new().into())).await {
                    return lost(format!("connection error: {e}"), opened_at);
                }
            }
            _ = sleep_until(update_done), if update_done.is_some() => {
                if let Some(target) = updater.take_finished(Instant::now()) {
                    // The server first, then the event: the report is on its way before anyone
                    // watching the event acts on it. Sent is not yet recorded: the server shows
                    // the update finished a moment later.
                    if let Err(e) = report_update(&mut tx, updater).await {
                        return lost(format!("cannot report the update: {e}"), opened_at);
                    }
                    on_event(Event::Updated { target });
                }
            }
        }
    }
}

/// Tells the server where the update stands (nothing while idle).
async fn report_update<S>(tx: &mut S, updater: &mut Updater) -> Result<(), S::Error>
where
    S: futures_util::Sink<Message> + Unpin,
{
    match updater.report(Instant::now()) {
        Some(update) => tx.send(encode(&AgentMessage::UpdateState { update })).await,
        None => Ok(()),
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
        // Restarting now would run the old version and lose the update.
        AgentCommand::Restart if matches!(updater.state(now), UpdateState::Updating { .. }) => {
            (Some(Refusal::RestartDuringUpdate), None)
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

    #[test]
    fn a_refused_handshake_gives_the_servers_wait() {
        use tokio_tungstenite::tungstenite::{Error, http};
        let refused = |status: u16, retry_after: Option<&str>| {
            let mut response = http::Response::builder().status(status);
            if let Some(value) = retry_after {
                response = response.header("Retry-After", value);
            }
            Error::Http(Box::new(response.body(None).unwrap()))
        };
        assert_eq!(
            retry_after(&refused(429, Some("7"))),
            Some(Duration::from_secs(7))
        );
        assert_eq!(
            retry_after(&refused(503, Some(" 2 "))),
            Some(Duration::from_secs(2))
        );
        assert_eq!(
            retry_after(&refused(429, Some("99999"))),
            Some(Duration::from_secs(3600))
        );
        assert_eq!(retry_after(&refused(429, None)), None);
        assert_eq!(retry_after(&refused(429, Some("soon"))), None);
        assert_eq!(retry_after(&refused(401, Some("7"))), None);
        assert_eq!(retry_after(&Error::ConnectionClosed), None);
    }

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
        config.version = "3.4.0".into();
        let mut updater = Updater::new(
            true,
            config.update_duration,
            Version::parse(&config.version),
        );
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
            answer(&config, &mut updater, AgentCommand::Update, Some("3.4.1")),
            (None, None)
        );
        assert_eq!(
            answer(&config, &mut updater, AgentCommand::Update, Some("3.4.1")),
            (Some(Refusal::UpdateInProgress), None)
        );
        assert_eq!(
            answer(&config, &mut updater, AgentCommand::Restart, None),
            (Some(Refusal::RestartDuringUpdate), None)
        );
        config.os = "Windows Server 2022".into();
        assert_eq!(
            answer(&config, &mut updater, AgentCommand::Restart, None),
            (Some(Refusal::RestartUnsupported), None)
        );
    }

    #[test]
    fn backoff_starts_over_only_after_a_stable_session() {
        let mut config = Config::new("http://127.0.0.1:1", "t");
        config.backoff_initial = Duration::from_millis(250);
        config.backoff_max = Duration::from_secs(30);
        let ms = Duration::from_millis;
        assert_eq!(retry_delay(&config, ms(500), None), ms(500));
        // Accepted, then dropped at once: still backing off.
        assert_eq!(retry_delay(&config, ms(8000), Some(ms(10))), ms(8000));
        assert_eq!(
            retry_delay(&config, ms(30_000), Some(Duration::from_secs(29))),
            ms(30_000)
        );
        // Up for as long as the largest delay: the link was good, start over.
        assert_eq!(
            retry_delay(&config, ms(30_000), Some(Duration::from_secs(30))),
            ms(250)
        );
    }

    #[test]
    fn jitter_stays_within_a_quarter() {
        let d = Duration::from_millis(400);
        let j = jitter(d);
        assert!(j >= d && j <= d + d / 4, "{j:?}");
    }
}
