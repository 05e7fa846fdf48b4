//! In-process tests of the API (`docs/api/README.md`) on the router against in-memory SQLite:
//! every operation's success path, each class of error, pagination, partial updates and
//! tolerance rules. One module per API area (`docs/api/<area>.md`), then one per cross-cutting
//! subject. A single test binary, so the server is linked once for all of them. What the HTTP
//! side does around the API (CORS, headers, the console's files, compression) is tested in
//! `tests/http/`; real processes, files and sockets in `tests/serve/`, but for `crash_safety`, which
//! kills the real server and is here so that the PostgreSQL pass runs it too.
//!
//! Responses are decoded as core's wire types (`tunnel_core::resources`,
//! `tunnel_core::errors::ErrorBody`) and compared typed; `serde_json::Value` stays only where a
//! test checks the raw JSON's shape (a field absent, a set of URIs found anywhere), each place
//! saying why.

#[path = "../common/mod.rs"]
mod common;
mod support;

// API areas.
mod api_keys;
mod backends;
mod credentials;
mod event_destinations;
mod event_subscriptions;
mod events;
mod ssh_cas;
mod tls_edges;
mod tunnel_sessions;
mod users;

// Cross-cutting subjects.
mod accounts;
mod concurrency;
mod crash_safety;
mod errors;
mod isolation;
mod limits;
mod links;
mod paging;
mod references;
mod search;
