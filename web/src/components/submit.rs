//! The one way the console sends a change to the API: [`Submit`], a Leptos `Action` with what
//! every form needs around it.
//!
//! It owns the busy state (one request at a time: a double click sends once), the server's
//! error on the last request (cleared as soon as a new one leaves, so an old message never
//! stands next to a new attempt), the server's per-field messages from `details.errors` for
//! the fields of the form, and what happens on success. Forms, deletes, agent commands and the
//! sign-in check all go through it, so none repeats the busy / error / spawn / match sequence.

use crate::api::{ApiError, Method, use_api};
use crate::components::error_view::ErrorView;
use crate::components::field::message_for;
use leptos::prelude::*;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::rc::Rc;
use tunnel_core::FieldError;

/// A request on its way, its answer already handed to `on_ok`: only the error is left.
type Job<E> = Pin<Box<dyn Future<Output = Result<(), E>>>>;

/// Makes the job of one input.
type MakeJob<I, E> = Box<dyn Fn(&I) -> Job<E>>;

/// One kind of request a page sends (create, save, delete, a command), with its state.
/// `Copy`: handles into the reactive arena, so it moves into any number of closures.
///
/// The `Action` runs type-erased jobs rather than the typed request itself: its machinery
/// (spawning, versions, pending count) is then compiled once per error type instead of once
/// per form, which keeps the console's WASM small.
pub struct Submit<I: 'static, O: 'static, E: 'static = ApiError> {
    action: Action<(), Result<(), E>>,
    // Made once: `Action::pending()` and `value()` create a new handle per call.
    pending: Memo<bool>,
    value: MappedSignal<Option<Result<(), E>>>,
    /// Makes the job of one input: the request, then `on_ok` with its answer.
    make: StoredValue<MakeJob<I, E>, LocalStorage>,
    /// The job handed from `send` to the action.
    next: StoredValue<Option<Job<E>>, LocalStorage>,
    answer: PhantomData<fn() -> O>,
}

impl<I, O, E> Clone for Submit<I, O, E> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<I, O, E> Copy for Submit<I, O, E> {}

impl<I, O, E> fmt::Debug for Submit<I, O, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Submit").finish_non_exhaustive()
    }
}

impl<I, O, E> Submit<I, O, E>
where
    I: 'static,
    O: 'static,
    E: Clone + Send + Sync + 'static,
{
    /// `send` makes the request for one input; `on_ok` runs with the answer of a request that
    /// succeeded (a toast, a reload, a navigation). It runs before the result is stored, so a
    /// navigation away from the page is safe: the action's own state outlives the page.
    ///
    /// `Action::new_unsync`: the futures of `gloo-net` and the callbacks holding the router
    /// are not `Send` on wasm32, and the console has one thread anyway.
    pub fn new<Fu>(send: impl Fn(&I) -> Fu + 'static, on_ok: impl Fn(&O) + 'static) -> Self
    where
        Fu: Future<Output = Result<O, E>> + 'static,
    {
        let on_ok = Rc::new(on_ok);
        let make: MakeJob<I, E> = Box::new(move |input: &I| {
            let request = send(input);
            let on_ok = Rc::clone(&on_ok);
            Box::pin(async move {
                let answer = request.await?;
                on_ok(&answer);
                Ok(())
            })
        });
        let next = StoredValue::new_local(None::<Job<E>>);
        let action: Action<(), Result<(), E>> = Action::new_unsync(move |_: &()| {
            let job = next.try_update_value(Option::take).flatten();
            async move {
                match job {
                    Some(job) => job.await,
                    None => Ok(()),
                }
            }
        });
        Submit {
            action,
            pending: action.pending(),
            value: action.value(),
            make: StoredValue::new_local(make),
            next,
            answer: PhantomData,
        }
    }

    /// Sends `input`, unless a request of this kind is already on its way.
    pub fn send(&self, input: I) {
        if self.pending.get_untracked() {
            return;
        }
        if let Some(job) = self.make.try_with_value(|make| make(&input)) {
            self.next.set_value(Some(job));
            self.action.dispatch(());
        }
    }

    /// The `on:submit` handler of a form: the browser's own submit is stopped, and `ready()`
    /// (the request when the form is valid, else `None`) is sent.
    pub fn on_submit(
        self,
        ready: impl Fn() -> Option<I> + 'static,
    ) -> impl Fn(leptos::ev::SubmitEvent) + 'static {
        move |ev: leptos::ev::SubmitEvent| {
            ev.prevent_default();
            if let Some(input) = ready() {
                self.send(input);
            }
        }
    }

    /// Whether a request is on its way (tracked).
    pub fn busy(&self) -> bool {
        self.pending.get()
    }

    /// The error of the last request; `None` while a new one is on its way (tracked).
    pub fn error(&self) -> Option<E> {
        if self.pending.get() {
            return None;
        }
        self.value
            .with(|v| v.as_ref().and_then(|r| r.as_ref().err().cloned()))
    }

    /// [`Submit::error`] as a signal, for components that take one.
    pub fn error_signal(self) -> Signal<Option<E>> {
        Signal::derive(move || self.error())
    }
}

impl<I, O> Submit<I, O, ApiError>
where
    I: Serialize + Clone + 'static,
    O: DeserializeOwned + 'static,
{
    /// Sends each input as the JSON body of `method path`, answered with JSON.
    pub fn request(method: Method, path: impl Into<String>, on_ok: impl Fn(&O) + 'static) -> Self {
        let api = use_api();
        let path = path.into();
        Submit::new(
            move |body: &I| {
                let (method, path, body) = (method.clone(), path.clone(), body.clone());
                async move { api.send_json(method, &path, &body).await }
            },
            on_ok,
        )
    }

    /// A create: `POST path`.
    pub fn post(path: impl Into<String>, on_ok: impl Fn(&O) + 'static) -> Self {
        Submit::request(Method::POST, path, on_ok)
    }

    /// An update of the fields sent: `PATCH path`. Answered 404 (the resource deleted
    /// meanwhile, in another tab or by another admin), it fetches the page's resource again
    /// (`reload`): the page then says it is gone, rather than keep its editor open over the
    /// error.
    pub fn patch(
        path: impl Into<String>,
        reload: RwSignal<u32>,
        on_ok: impl Fn(&O) + 'static,
    ) -> Self {
        Submit::request(Method::PATCH, path, on_ok).reload_when_gone(reload)
    }
}

impl<I, O> Submit<I, O, ApiError>
where
    I: 'static,
    O: 'static,
{
    /// On an answer 404 (what the request changes was deleted meanwhile), fetches the page's
    /// resource again (`reload`), so that the page says it is gone.
    pub fn reload_when_gone(self, reload: RwSignal<u32>) -> Self {
        Effect::new(move |_| {
            if self.error().is_some_and(|e| e.status == 404) {
                reload.try_update(|r| *r += 1);
            }
        });
        self
    }
}

impl<I, O> Submit<I, O, ApiError>
where
    I: 'static,
    O: 'static,
{
    /// The message under form field `field`: the live `tunnel-core` check first, else what the
    /// server said about that field on the last request (`details.errors`).
    pub fn message(
        self,
        live: Memo<Vec<FieldError>>,
        field: &'static str,
    ) -> Signal<Option<String>> {
        self.message_by(message_for, live, field)
    }

    /// [`Submit::message`] with another way to `pick` the message, such as
    /// [`crate::components::field::list_message_for`] for a list field, whose live messages
    /// name its items (`hostports[1]`).
    pub fn message_by(
        self,
        pick: fn(&str, &[FieldError], Option<&ApiError>) -> Option<String>,
        live: Memo<Vec<FieldError>>,
        field: &'static str,
    ) -> Signal<Option<String>> {
        Signal::derive(move || {
            let server = self.error();
            live.with(|l| pick(field, l, server.as_ref()))
        })
    }

    /// The error box of the last failed request, under `title`.
    pub fn failure(self, title: &'static str) -> impl IntoView {
        move || {
            self.error()
                .map(|e| view! { <ErrorView error=e title=title /> })
        }
    }
}
