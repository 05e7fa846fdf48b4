//! stub
use leptos::prelude::*;
#[component] pub fn TlsEdgeList() -> impl IntoView { "" }
#[component] pub fn TlsEdgeDetail() -> impl IntoView { "" }
