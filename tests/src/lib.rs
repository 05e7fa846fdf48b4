//! `tunnel-e2e`: end-to-end tests of the console, the server and agents together (DESIGN §10).
//!
//! `harness` starts the real programs (server on a free loopback port with a temporary SQLite
//! database and the release console, agents, chromedriver + headless Chromium) and cleans them up
//! on drop, also when a test fails. `api` calls the API directly to set up data. `pages` holds one
//! page object per console page, driving it by labels, buttons and visible text.

pub mod api;
pub mod harness;
pub mod pages;
