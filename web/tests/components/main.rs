//! Component tests in headless Chromium: each mounts a real component, drives it like a user
//! (typing, clicking, Esc) and checks what the DOM shows. One test binary; one module per
//! subject, [`dom`] holding the shared ways of driving the page.
#![cfg(target_arch = "wasm32")]

mod acl;
mod activity;
mod agent_commands;
mod dom;
mod error_view;
mod routes;
mod sign_in;
mod sources_picker;
mod ssh_ca_form;
mod submit;
mod token_dialog;

wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);
