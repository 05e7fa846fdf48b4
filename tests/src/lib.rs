//! `tunnel-e2e`: end-to-end tests of the console, the server and agents together (the
//! end-to-end layer of `docs/testing.md`).
//!
//! `harness` starts the real programs (server on a free loopback port with a temporary SQLite
//! database, or a fresh PostgreSQL one when `TUNNEL_TEST_POSTGRES` names a shared cluster, and
//! the release console, agents, chromedriver + headless Chromium, the last two through
//! `tunnel-testkit`) and cleans them up on drop, also when a test fails; its `Stack` is the setup
//! every flow starts from. `api` calls the API directly to set up data and to check
//! what the console sent. `axe` runs npm axe-core in the page shown (the accessibility test). `every_page` makes one resource
//! of every kind and lists every route that shows them.
//! `pages` holds one page object per console page, named after its API area, driving it by
//! labels, buttons and visible text.

pub mod api;
pub mod axe;
pub mod every_page;
pub mod harness;
pub mod pages;
