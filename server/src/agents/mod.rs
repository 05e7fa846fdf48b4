//! The live tunnel sessions, as a service below the API (docs/agent-channel.md,
//! docs/cluster.md): what happens on the WebSocket an agent connects with (`channel`), this
//! node's connections (`registry`), the sessions as every node lists and commands them
//! (`sessions`, over the directory in the store), this server as a node of a cluster
//! (`cluster`), the delivery of the restart/stop/update commands (`commands`, `updates`) and
//! the audit events of sessions (`journal`).
//!
//! Named `agents` (not `sessions`) because everything here is about the connected agents and
//! their channel. It knows no routing and imports nothing of `api`: the HTTP routes that list
//! sessions, send commands, upgrade the agent's connection and answer other nodes are
//! `api::tunnel_sessions`, `api::agent_channel` and `api::cluster`.

pub mod access;
pub mod channel;
pub mod cluster;
pub mod commands;
pub mod journal;
pub mod registry;
pub mod sessions;
pub mod updates;

pub use cluster::Node;
pub use commands::Undelivered;
pub use registry::{LiveSession, Registry, Timings};
pub use sessions::Sessions;
pub use updates::RestartWait;
