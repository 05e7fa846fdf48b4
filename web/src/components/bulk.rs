//! Acting on many rows of a list at once (docs/console.md, act on many): the rows' checkboxes
//! ([`Selection`]: a click toggles one, Shift+click a range from the last one clicked, the
//! heading's box all of the page), the bar that appears with a selection, and the run.
//!
//! A run asks first (one confirmation naming the count), then sends one request per row, one
//! after the other (the server is not flooded and the progress is exact), and shows each row's
//! result as it comes: done, or the API's error with its code. "Retry the failed ones" runs
//! again only those; "Stop" leaves the rest undone. Closing the run clears what succeeded from
//! the selection and reloads the list.
//!
//! The selection belongs to one page of the list: it is dropped when the page changes, and an
//! action only takes the selected rows still on the page (a refreshed sessions list may have
//! lost some).

use super::confirm::ConfirmDialog;
use super::dialog::Modal;
use super::keep_focus_on;
use super::text::with_code_spans;
use crate::api::{ApiError, use_api};
use crate::state::{AppState, use_app};
use leptos::prelude::*;

/// One action offered on the selected rows.
#[derive(Debug, Clone, Copy)]
pub struct BulkAction {
    /// The button and the confirmation's verb ("Delete").
    pub label: &'static str,
    /// What a row that succeeded says ("deleted").
    pub done: &'static str,
    /// The API path of one row's request.
    pub path: fn(&str) -> String,
    /// `POST {}` (an agent command) instead of `DELETE`.
    pub post: bool,
    /// Destructive (red confirm) rather than disruptive but recoverable.
    pub danger: bool,
    /// What happens, said in the confirmation after the count ("will be deleted. …").
    pub warning: &'static str,
}

impl BulkAction {
    /// Deletes each row at `path(id)`.
    pub const fn delete(path: fn(&str) -> String, warning: &'static str) -> BulkAction {
        BulkAction {
            label: "Delete",
            done: "deleted",
            path,
            post: false,
            danger: true,
            warning,
        }
    }

    /// Sends `POST {}` to `path(id)` for each row.
    pub const fn post(
        label: &'static str,
        done: &'static str,
        path: fn(&str) -> String,
        warning: &'static str,
    ) -> BulkAction {
        BulkAction {
            label,
            done,
            path,
            post: true,
            danger: false,
            warning,
        }
    }

    /// Confirmed with the destructive style (an agent stopped does not come back by itself).
    pub const fn dangerous(self) -> BulkAction {
        BulkAction {
            danger: true,
            ..self
        }
    }
}

/// What the list's rows are called, for the bar, the confirmation and exports.
#[derive(Debug, Clone, Copy, Default)]
pub struct Noun {
    pub one: &'static str,
    pub many: &'static str,
}

impl Noun {
    /// "1 credential", "3 credentials".
    pub fn count(self, n: usize) -> String {
        format!("{n} {}", if n == 1 { self.one } else { self.many })
    }
}

/// The selected rows of the page shown, by id.
#[derive(Debug, Clone, Copy)]
pub struct Selection {
    /// Selected ids.
    selected: RwSignal<Vec<String>>,
    /// The rows of the page shown, in order: (id, name).
    rows: RwSignal<Vec<(String, String)>>,
    /// The row clicked last, where a Shift+click range starts.
    anchor: StoredValue<Option<String>>,
}

impl Selection {
    pub fn new() -> Selection {
        Selection {
            selected: RwSignal::new(Vec::new()),
            rows: RwSignal::new(Vec::new()),
            anchor: StoredValue::new(None),
        }
    }

    /// The page now shown (after each load): selected rows that left it are dropped.
    pub fn show(&self, rows: Vec<(String, String)>) {
        self.selected
            .update(|s| s.retain(|id| rows.iter().any(|(r, _)| r == id)));
        self.rows.set(rows);
    }

    /// Another page (or another search): nothing selected.
    pub fn clear(&self) {
        self.selected.set(Vec::new());
        self.anchor.set_value(None);
    }

    pub fn is_selected(&self, id: &str) -> bool {
        self.selected.with(|s| s.iter().any(|x| x == id))
    }

    /// The selected rows in page order: (id, name).
    pub fn chosen(&self) -> Vec<(String, String)> {
        let rows = self.rows.get();
        self.selected
            .with(|s| rows.into_iter().filter(|(id, _)| s.contains(id)).collect())
    }

    pub fn count(&self) -> usize {
        self.selected.with(Vec::len)
    }

    fn set(&self, id: &str, on: bool) {
        self.selected.update(|s| {
            let at = s.iter().position(|x| x == id);
            match (on, at) {
                (true, None) => s.push(id.to_owned()),
                (false, Some(i)) => {
                    s.remove(i);
                }
                _ => {}
            }
        });
    }

    /// A row's box clicked (now `on`): with Shift, every row from the last one clicked to this
    /// one takes the same state.
    pub fn click(&self, id: &str, on: bool, shift: bool) {
        let anchor = self.anchor.get_value();
        let range = shift
            .then(|| {
                self.rows.with_untracked(|rows| {
                    let a = rows.iter().position(|(r, _)| Some(r) == anchor.as_ref())?;
                    let b = rows.iter().position(|(r, _)| r == id)?;
                    let (from, to) = (a.min(b), a.max(b));
                    Some(
                        rows[from..=to]
                            .iter()
                            .map(|(r, _)| r.clone())
                            .collect::<Vec<_>>(),
                    )
                })
            })
            .flatten();
        match range {
            Some(ids) => ids.iter().for_each(|r| self.set(r, on)),
            None => self.set(id, on),
        }
        self.anchor.set_value(Some(id.to_owned()));
    }

    /// The heading's box: all rows of the page, or none.
    pub fn all(&self, on: bool) {
        let ids: Vec<String> = if on {
            self.rows
                .with_untracked(|r| r.iter().map(|(id, _)| id.clone()).collect())
        } else {
            Vec::new()
        };
        self.selected.set(ids);
    }

    pub fn any(&self) -> bool {
        self.count() != 0
    }

    /// Some rows of the page selected, not all (the heading's box shows a dash).
    pub fn partly(&self) -> bool {
        self.any() && !self.all_selected()
    }

    /// Whether every row of the page is selected (and there is one).
    pub fn all_selected(&self) -> bool {
        let (n, rows) = (self.count(), self.rows.with(Vec::len));
        n > 0 && n == rows
    }
}

impl Default for Selection {
    fn default() -> Selection {
        Selection::new()
    }
}

/// A row's checkbox, labelled by its name (or id) for screen readers.
#[component]
pub fn SelectCell(selection: Selection, id: String, name: String) -> impl IntoView {
    let label = format!("Select {}", if name.is_empty() { &id } else { &name });
    let (checked_id, click_id) = (id.clone(), id);
    view! {
        <td class="select">
            <input type="checkbox" class="row-select" aria-label=label
                prop:checked=move || selection.is_selected(&checked_id)
                on:click=move |ev| selection.click(&click_id, event_target_checked(&ev), ev.shift_key()) />
        </td>
    }
}

/// The heading's checkbox: all rows of the page.
#[component]
pub fn SelectAllCell(selection: Selection) -> impl IntoView {
    view! {
        <th scope="col" class="select">
            <input type="checkbox" class="select-all" aria-label="Select all rows of this page"
                prop:checked=move || selection.all_selected()
                prop:indeterminate=move || selection.partly()
                on:change=move |ev| selection.all(event_target_checked(&ev)) />
        </th>
    }
}

/// One row's outcome in a run.
#[derive(Debug, Clone, PartialEq)]
enum Outcome {
    Waiting,
    Done,
    Failed(ApiError),
    /// Left undone by "Stop".
    Skipped,
}

/// A run of one action over rows: (id, name, outcome).
#[derive(Debug, Clone)]
struct Run {
    action: BulkAction,
    rows: Vec<(String, String, Outcome)>,
}

impl Run {
    fn finished(&self) -> usize {
        self.rows
            .iter()
            .filter(|(_, _, o)| *o != Outcome::Waiting)
            .count()
    }
    fn failed(&self) -> usize {
        self.rows
            .iter()
            .filter(|(_, _, o)| matches!(o, Outcome::Failed(_) | Outcome::Skipped))
            .count()
    }
}

/// The bar under a list with a selection (its actions and "Clear"), the confirmation, and the
/// run's dialog. `reload` refetches the list after a run.
#[component]
pub fn BulkBar(
    selection: Selection,
    actions: &'static [BulkAction],
    noun: Noun,
    reload: RwSignal<u32>,
) -> impl IntoView {
    let api = use_api();
    let app = use_app();
    let asked = RwSignal::new(None::<BulkAction>);
    let run = RwSignal::new(None::<Run>);
    let stop = StoredValue::new(false);
    let page = super::ThisPage::new();
    // Sends the requests of every waiting row, one at a time. A user who leaves the page (a
    // link, Back) does not stop a run they confirmed: it goes on, and a toast says how it ended.
    let start = move || {
        stop.set_value(false);
        let Some((action, waiting)) = run.with_untracked(|r| {
            let r = r.as_ref()?;
            let waiting: Vec<(usize, String)> = r
                .rows
                .iter()
                .enumerate()
                .filter(|(_, (_, _, o))| *o == Outcome::Waiting)
                .map(|(i, (id, _, _))| (i, id.clone()))
                .collect();
            Some((r.action, waiting))
        }) else {
            return;
        };
        let page = page.clone();
        leptos::task::spawn_local(async move {
            let (mut done, mut failed, mut left) = (0, 0, false);
            for (i, id) in waiting {
                // "Stop" (on the page) skips the rest; a page left has no Stop to press.
                let outcome = if stop.try_get_value().unwrap_or(false) {
                    Outcome::Skipped
                } else {
                    let path = (action.path)(&id);
                    let result = if action.post {
                        api.post_no_content(&path).await
                    } else {
                        api.delete(&path).await
                    };
                    match result {
                        Ok(()) => Outcome::Done,
                        // Deleted meanwhile (another tab, another admin): what was asked is
                        // so, as a single delete takes it; a retry could only fail again.
                        Err(e) if !action.post && e.status == 404 => Outcome::Done,
                        Err(e) => Outcome::Failed(e),
                    }
                };
                match outcome {
                    Outcome::Done => done += 1,
                    Outcome::Failed(_) => failed += 1,
                    _ => {}
                }
                left |= run
                    .try_update(|r| {
                        if let Some(r) = r {
                            r.rows[i].2 = outcome;
                        }
                    })
                    .is_none();
            }
            if left || !page.still_shown() {
                page.changed_while_away();
                let not = if failed > 0 {
                    format!("; {failed} failed")
                } else {
                    String::new()
                };
                app.toast(
                    format!("{} {}{not}.", capitalised(&noun.count(done)), action.done),
                    failed > 0,
                );
            }
        });
    };
    let start_confirmed = start.clone();
    let confirm = Callback::new(move |_| {
        let Some(action) = asked.get_untracked() else {
            return;
        };
        asked.set(None);
        let rows = selection
            .chosen()
            .into_iter()
            .map(|(id, name)| (id, name, Outcome::Waiting))
            .collect();
        run.set(Some(Run {
            action,
            rows: own_key_last(rows, app),
        }));
        start_confirmed();
    });
    let retry = move |_| {
        run.update(|r| {
            if let Some(r) = r {
                for row in &mut r.rows {
                    if matches!(row.2, Outcome::Failed(_) | Outcome::Skipped) {
                        row.2 = Outcome::Waiting;
                    }
                }
            }
        });
        start();
    };
    let close = Callback::new(move |_| {
        let Some(done) = run.get_untracked() else {
            return;
        };
        if done.finished() < done.rows.len() {
            // Still running: "Stop" first, so nothing is sent after the dialog is gone.
            stop.set_value(true);
            return;
        }
        let succeeded: Vec<&(String, String, Outcome)> = done
            .rows
            .iter()
            .filter(|(_, _, o)| *o == Outcome::Done)
            .collect();
        if succeeded.iter().any(|(id, _, _)| app.is_own_key(id)) {
            run.set(None);
            app.sign_out_own_key_deleted();
            return;
        }
        for (id, _, _) in &succeeded {
            selection.set(id, false);
        }
        // The failed ones stay selected, and the toast says how many there are.
        let failed = done.failed();
        if !succeeded.is_empty() || failed > 0 {
            let not = if failed > 0 {
                format!("; {failed} failed, still selected")
            } else {
                String::new()
            };
            app.toast(
                format!(
                    "{} {}{not}.",
                    capitalised(&noun.count(succeeded.len())),
                    done.action.done
                ),
                failed > 0,
            );
        }
        run.set(None);
        reload.update(|r| *r += 1);
        // The dialog's opener (the bar's button) went with the selection: the focus goes to
        // the list's "select all" box rather than the top of the page.
        keep_focus_on("main .select-all");
    });
    let cancel = Callback::new(move |_| asked.set(None));
    view! {
        <Show when=move || selection.any()>
            <div class="bulk-bar" role="region" aria-label="Selected rows">
                <span class="bulk-count" role="status">{move || format!("{} selected", noun.count(selection.count()))}</span>
                {actions.iter().map(|a| {
                    let a = *a;
                    view! {
                        <button type="button" class=if a.danger { "danger" } else { "" }
                            on:click=move |_| asked.set(Some(a))>{a.label}</button>
                    }
                }).collect_view()}
                // The bar goes with the selection, and its button with it: the focus goes to the
                // list's "select all" box, not to the top of the page.
                <button type="button" class="link" on:click=move |_| {
                    selection.clear();
                    keep_focus_on("main .select-all");
                }>"Clear selection"</button>
            </div>
        </Show>
        {move || asked.get().map(|a| {
            let what = noun.count(selection.count());
            // Said only when it is so: the console's own API key is among the rows.
            let own_key = if selection.chosen().iter().any(|(id, _)| app.is_own_key(id)) {
                " The API key this console is signed in with is one of them: you will be signed out."
            } else {
                ""
            };
            view! {
                <ConfirmDialog title=format!("{} {what}?", a.label) message=format!("{} {}{own_key}", capitalised(&what), a.warning)
                    confirm_label=format!("{} {what}", a.label) safe=!a.danger on_confirm=confirm on_cancel=cancel />
            }
        })}
        <RunDialog run=run noun=noun on_close=close on_retry=Callback::new(retry) />
    }
}

/// The rows in their order, but the API key this console is signed in with (when deleting API
/// keys) moved last: revoking it signs the console out, so every other row is sent first.
fn own_key_last(
    rows: Vec<(String, String, Outcome)>,
    app: AppState,
) -> Vec<(String, String, Outcome)> {
    // A partition, not a sort (whose code is large in the WASM): the others keep the list's
    // order.
    let (own, mut others): (Vec<_>, Vec<_>) =
        rows.into_iter().partition(|(id, _, _)| app.is_own_key(id));
    others.extend(own);
    others
}

/// The dialog of a run, open while there is one: the progress, then each row's result. One
/// dialog for the whole run (its content follows the run), so focus stays on its button, which
/// says "Stop" while requests go and "Close" once all are done.
#[component]
fn RunDialog(
    run: RwSignal<Option<Run>>,
    noun: Noun,
    on_close: Callback<()>,
    on_retry: Callback<()>,
) -> impl IntoView {
    let open = Memo::new(move |_| run.with(Option::is_some));
    let counts = Memo::new(move |_| {
        run.with(|r| {
            r.as_ref()
                .map(|r| (r.rows.len(), r.finished(), r.failed()))
                .unwrap_or_default()
        })
    });
    let running = move || counts.with(|(total, finished, _)| finished < total);
    let title = move || {
        let (total, finished, failed) = counts.get();
        let Some(action) = run.with(|r| r.as_ref().map(|r| r.action)) else {
            return String::new();
        };
        if finished < total {
            format!("{} {}…", action.label, noun.count(total))
        } else if failed == 0 {
            format!("{} {}", capitalised(&noun.count(total)), action.done)
        } else {
            format!(
                "{} of {} {}",
                total - failed,
                noun.count(total),
                action.done
            )
        }
    };
    let status = move || {
        let (total, finished, failed) = counts.get();
        let failed = if failed > 0 {
            format!(", {failed} failed")
        } else {
            String::new()
        };
        format!("{finished} of {total} done{failed}")
    };
    let results = move || {
        run.with(|r| {
            let Some(r) = r else {
                return Vec::new();
            };
            r.rows
                .iter()
                .map(|(id, name, outcome)| {
                    let (class, text) = match outcome {
                        Outcome::Waiting => ("waiting", "waiting".to_owned()),
                        Outcome::Done => ("done", r.action.done.to_owned()),
                        Outcome::Failed(e) => (
                            "failed",
                            match e.code() {
                                Some(code) => format!("{} ({code})", e.message),
                                None => e.message.clone(),
                            },
                        ),
                        Outcome::Skipped => ("failed", "not done: stopped".to_owned()),
                    };
                    // A row without a name is its id alone (not the id twice).
                    let name = (!name.is_empty())
                        .then(|| view! { <span class="bulk-name">{name.clone()}</span> " " });
                    view! {
                        <li class=class data-id=id.clone()>
                            {name}
                            <code class="id">{id.clone()}</code>
                            <span class="bulk-outcome">{with_code_spans(&text)}</span>
                        </li>
                    }
                })
                .collect_view()
        })
    };
    move || {
        open.get().then(|| {
            view! {
                <Modal labelled_by="bulk-title" class="bulk-run" on_close=on_close>
                    <h2 id="bulk-title">{title}</h2>
                    <progress max=move || counts.get().0 value=move || counts.get().1 aria-labelledby="bulk-title"></progress>
                    <p role="status">{status}</p>
                    <ul class="bulk-results">{results}</ul>
                    <div class="actions">
                        {move || (!running() && counts.get().2 > 0).then(|| view! {
                            // Gone while the retry runs: the focus goes to Stop, which the
                            // dialog keeps (and Escape with it).
                            <button type="button" on:click=move |_| {
                                on_retry.run(());
                                keep_focus_on("dialog .bulk-close");
                            }>
                                {move || format!("Retry the failed ones ({})", counts.get().2)}
                            </button>
                        })}
                        <button type="button" class="primary bulk-close" autofocus on:click=move |_| on_close.run(())>
                            {move || if running() { "Stop" } else { "Close" }}
                        </button>
                    </div>
                </Modal>
            }
        })
    }
}

/// "3 credentials" → "3 credentials"; "credential" → "Credential".
fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}
