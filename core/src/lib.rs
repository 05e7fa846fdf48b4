//! `tunnel-core`: the platform-neutral heart of Tunnel Console, shared by the server, the agent
//! and the browser console. No I/O, no async runtime, no DOM, no SQL; builds for native and
//! `wasm32-unknown-unknown`.
//!
//! Code map:
//! - [`ids`]: id prefixes, time-sortable id generation, authtoken / API key format.
//! - [`acl`]: ACL bind rules: parsing and matching (the edge cases are decided there).
//! - [`limits`]: field limits in their units (bytes or characters), page sizes.
//! - [`ssh`]: SSH CA key type / curve / size combinations and defaults.
//! - [`event_types`]: event type form and catalogue.
//! - [`version`]: agent versions and the never-cross-a-major update rule.
//! - [`errors`]: the error body, the catalogue of stable error codes, the crate's error enum.
//! - [`resources`]: wire types of every resource, request and list page, with `validate()`.
//! - [`paths`]: endpoint paths and headers.
//! - [`agent_protocol`]: messages of the agent channel.

pub mod acl;
pub mod agent_protocol;
pub mod errors;
pub mod event_types;
pub mod ids;
pub mod limits;
pub mod paths;
pub mod resources;
pub mod ssh;
pub mod version;

pub use errors::{Error, ErrorBody, ErrorCode, FieldError};
pub use resources::Validate;

// Core's unit tests also run in headless Chromium (`cargo xtask test`).
#[cfg(all(test, target_arch = "wasm32"))]
wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

#[cfg(all(test, not(target_arch = "wasm32")))]
pub(crate) use std::prelude::v1::test as test_case;
/// The test attribute of core's unit tests: `#[test]` natively, `#[wasm_bindgen_test]` in the
/// browser, so one table of cases runs on both.
#[cfg(all(test, target_arch = "wasm32"))]
pub(crate) use wasm_bindgen_test::wasm_bindgen_test as test_case;
