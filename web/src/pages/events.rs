//! stub
use leptos::prelude::*;
#[component] pub fn SubscriptionList() -> impl IntoView { "" }
#[component] pub fn SubscriptionNew() -> impl IntoView { "" }
#[component] pub fn SubscriptionDetail() -> impl IntoView { "" }
