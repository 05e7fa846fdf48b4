//! The audit log (docs/api/events.md, an extension): `GET /events`, newest first with keyset
//! paging like every list, filtered by `type`, `object_id`, `actor_id` and a time range
//! (`after` inclusive, `before` exclusive, RFC 3339); and `GET /events/{id}`. Events are written
//! by the store with the changes they record (`store::events`); nothing here writes.

use super::Path;
use super::resource::Page;
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::paging;
use crate::response::Json;
use crate::state::AppState;
use crate::store::{EventFilter, EventRow};
use axum::Router;
use axum::extract::{RawQuery, State};
use axum::routing::get;
use tunnel_core::errors::ErrorCode;
use tunnel_core::ids::IdKind;
use tunnel_core::paths;
use tunnel_core::resources::event::{Event, EventList};

pub fn router() -> Router<AppState> {
    Router::new()
        .route(paths::EVENTS, get(list))
        .route(&paths::event("{id}"), get(read))
}

async fn list(
    State(state): State<AppState>,
    caller: Caller,
    RawQuery(query): RawQuery,
) -> ApiResult<Json<Page<EventList>>> {
    let page = paging::parse(query.as_deref(), &[IdKind::Event])?;
    let (filter, kept) = filter(query.as_deref())?;
    let rows = state
        .store
        .list_events(&caller.account_id, &page, &filter)
        .await?;
    // The page's own uri and the next page's keep the filters.
    let path = match kept.is_empty() {
        true => paths::EVENTS.to_owned(),
        false => format!("{}?{kept}", paths::EVENTS),
    };
    let shown = |row| wire(&state, row);
    Ok(Json(Page::of_rows(&state, &path, &page, rows, shown)))
}

async fn read(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<Json<Event>> {
    let row = state.store.get_event(&caller.account_id, &id).await?;
    Ok(Json(wire(&state, row)))
}

/// The wire form of a stored event: what `GET /events/{id}` answers, and the body of its webhooks.
pub(crate) fn wire(state: &AppState, mut row: EventRow) -> Event {
    rebase_uris(state, &mut row.object);
    Event {
        uri: state.uri(&paths::event(&row.id)),
        id: row.id,
        event_type: row.event_type,
        occurred_at: row.occurred_at,
        actor: row.actor,
        operation_id: row.operation_id,
        object_id: row.object_id,
        object: row.object,
        changed_fields: row.changed_fields,
        details: row.details,
    }
}

/// Every `uri` in an event's object, on today's `{base_url}`. The object was stored as the API
/// answered it then, `uri`s absolute on the base URL of that day; a server since moved (another
/// `--public-url`, `--api-listen`) must not send its clients to the old address.
fn rebase_uris(state: &AppState, value: &mut serde_json::Value) {
    use serde_json::Value;
    match value {
        Value::Object(map) => {
            for (name, value) in map.iter_mut() {
                match value {
                    Value::String(uri) if name == "uri" => {
                        if let Some(path) = path_of(uri) {
                            *uri = state.uri(path);
                        }
                    }
                    // The one map of the user's own strings (a backend's): a label named `uri`
                    // is data, not a link.
                    _ if name == "labels" => {}
                    value => rebase_uris(state, value),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| rebase_uris(state, item)),
        _ => {}
    }
}

/// The API path of an absolute `uri`, whatever base URL it was made on: from the last place a
/// collection's path begins (a base URL may itself end in a collection's name; the API path
/// comes after it). `None` when it names no collection.
fn path_of(uri: &str) -> Option<&str> {
    paths::COLLECTIONS
        .iter()
        .filter_map(|collection| {
            uri.rmatch_indices(collection)
                .find(|(at, _)| {
                    let rest = &uri[at + collection.len()..];
                    rest.is_empty() || rest.starts_with('/')
                })
                .map(|(at, _)| at)
        })
        .max()
        .map(|at| &uri[at..])
}

/// The filters of the query, each checked, and the query string that repeats them (for the
/// page's `uri` and `next_page_uri`).
fn filter(query: Option<&str>) -> ApiResult<(EventFilter, String)> {
    let mut filter = EventFilter::default();
    let mut kept = form_urlencoded::Serializer::new(String::new());
    for (name, value) in form_urlencoded::parse(query.unwrap_or_default().as_bytes()) {
        let invalid = |why: String| {
            ApiError::new(ErrorCode::InvalidQueryParameter, format!("{name}: {why}"))
                .with_field(name.to_string())
        };
        match name.as_ref() {
            "type" => {
                tunnel_core::event_types::check_form(&value).map_err(invalid)?;
                filter.event_type = Some(value.to_string());
            }
            "object_id" | "actor_id" => {
                tunnel_core::ids::check_id_form(&value).map_err(invalid)?;
                match name.as_ref() {
                    "object_id" => filter.object_id = Some(value.to_string()),
                    _ => filter.actor_id = Some(value.to_string()),
                }
            }
            "after" | "before" => {
                let ms = instant(&value).ok_or_else(|| {
                    invalid(
                        "must be an RFC 3339 time from 1970 on, such as `2026-11-22T09:30:00Z`"
                            .into(),
                    )
                })?;
                match name.as_ref() {
                    "after" => filter.after_ms = Some(ms),
                    _ => filter.before_ms = Some(ms),
                }
            }
            // `limit` and `before_id` are the page's; nothing else passed the caller check.
            _ => continue,
        }
        kept.append_pair(&name, &value);
    }
    Ok((filter, kept.finish()))
}

/// An RFC 3339 time as milliseconds since the Unix epoch (times before 1970 are refused).
fn instant(text: &str) -> Option<u64> {
    let t =
        time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339).ok()?;
    u64::try_from(t.unix_timestamp_nanos() / 1_000_000).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_uri_path_is_found_whatever_base_made_it() {
        let cases = [
            (
                "http://h:8080/api/credentials/cr_1",
                Some("/credentials/cr_1"),
            ),
            (
                "http://h:8081/edges/tls/edgtls_1/backend",
                Some("/edges/tls/edgtls_1/backend"),
            ),
            (
                "https://x/credentials/event_subscriptions/esb_1/sources/credential_created.v0",
                Some("/event_subscriptions/esb_1/sources/credential_created.v0"),
            ),
            ("https://x/users/api/users/usr_1", Some("/users/usr_1")),
            ("https://x/api/events", Some("/events")),
            // Not a collection: the name must end where a segment does.
            ("https://x/api/credentialsx/1", None),
            ("https://x/api/nothing", None),
        ];
        for (uri, path) in cases {
            assert_eq!(path_of(uri), path, "{uri}");
        }
    }

    #[test]
    fn filters_are_checked_and_kept() {
        let (f, kept) = filter(Some(
            "type=credential_created.v0&object_id=cr_0ERs00000000000000000000001&after=2026-01-01T00:00:00Z&limit=5",
        ))
        .unwrap();
        assert_eq!(f.event_type.as_deref(), Some("credential_created.v0"));
        assert_eq!(
            f.object_id.as_deref(),
            Some("cr_0ERs00000000000000000000001")
        );
        assert_eq!(f.after_ms, Some(1_767_225_600_000));
        assert_eq!(
            kept,
            "type=credential_created.v0&object_id=cr_0ERs00000000000000000000001&after=2026-01-01T00%3A00%3A00Z"
        );
        assert!(filter(Some("type=nope")).is_err());
        assert!(filter(Some("after=yesterday")).is_err());
        assert!(filter(Some("actor_id=a%20b")).is_err());
        // Only what an id can be: a kind's prefix and its 27 letters and digits.
        for bad in [
            "object_id=garbage",
            "object_id=cr_x",
            "actor_id=xx_0ERs000000000000000000000001",
            "object_id=",
        ] {
            assert!(filter(Some(bad)).is_err(), "{bad}");
        }
    }
}
