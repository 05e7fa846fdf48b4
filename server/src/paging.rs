//! List pages (docs/api/README.md, lists and paging; sizes in docs/limits.md): `limit`
//! (1..=100, default 100) and `before_id`, newest first (oldest first with the `order`
//! extension where the search is taken), keyset pagination on the id, and an
//! absolute `next_page_uri` (or `null` on the last page). Also the one check of query
//! parameters: lists accept exactly these two, other operations none (unknown parameters are a
//! 400).

use crate::error::{self, ApiError};
use crate::state::AppState;
use crate::store::PageQuery;
use tunnel_core::errors::ErrorCode;
use tunnel_core::ids::{IdKind, parse_id_of};
use tunnel_core::limits::{DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE};
use tunnel_core::paths;

/// The query parameters a list accepts.
pub const LIST_PARAMS: [&str; 2] = ["limit", "before_id"];
/// The search parameter (an extension) the lists of resources and sessions also accept; the
/// audit log and a destination's deliveries have filters of their own instead.
pub const SEARCH_PARAM: &str = "q";
/// The order parameter (an extension) of the same lists: `newest` (the default) or `oldest`.
pub const ORDER_PARAM: &str = "order";
/// The values of [`ORDER_PARAM`].
pub const ORDERS: [&str; 2] = ["newest", "oldest"];
/// The deliveries of a destination, as its route is written (the matched path).
pub const DELIVERIES: &str = "/event_destinations/{id}/deliveries";

/// Whether the list at `list_path` (relative to the API prefix, as its route is written) takes
/// the search: every list but the audit log and a destination's deliveries.
pub fn takes_search(list_path: &str) -> bool {
    list_path != paths::EVENTS && list_path != DELIVERIES
}

/// Refuses any query parameter not in `accepted` (the first unknown one is named), one given
/// twice, a value that is not UTF-8 once decoded, and one holding NUL.
pub fn check_query_names(query: Option<&str>, accepted: &[&str]) -> Result<(), ApiError> {
    // A value that is not UTF-8 once decoded (`q=%FF`) would be read with U+FFFD in its place
    // and quietly match nothing: refused, naming its parameter.
    for pair in query.unwrap_or_default().split('&') {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        if percent_encoding::percent_decode_str(value)
            .decode_utf8()
            .is_err()
        {
            let name: String = form_urlencoded::parse(name.as_bytes())
                .next()
                .map(|(name, _)| error::quoted(&name))
                .unwrap_or_default();
            return Err(ApiError::new(
                ErrorCode::InvalidQueryParameter,
                format!("`{name}` is not UTF-8 text once decoded."),
            )
            .with_field(name));
        }
    }
    let mut seen: Vec<std::borrow::Cow<'_, str>> = Vec::new();
    for (name, value) in form_urlencoded::parse(query.unwrap_or_default().as_bytes()) {
        // One value per parameter: a second would silently replace the first (`limit=1&limit=2`,
        // two `type`s read as one), or be taken for an "or" the API does not do.
        if accepted.contains(&name.as_ref()) && seen.contains(&name) {
            return Err(ApiError::new(
                ErrorCode::InvalidQueryParameter,
                format!("`{name}` is given more than once; give it once."),
            )
            .with_field(name.to_string()));
        }
        seen.push(name.clone());
        // No text the API stores or looks up may hold NUL (PostgreSQL cannot store it): refused
        // here, the same on every database.
        if value.contains('\0') && accepted.contains(&name.as_ref()) {
            return Err(ApiError::new(
                ErrorCode::InvalidQueryParameter,
                format!("`{name}` contains the NUL character (%00), which no value may hold."),
            )
            .with_field(name.to_string()));
        }
        if !accepted.contains(&name.as_ref()) {
            let shown = error::quoted(&name);
            let msg = if accepted.is_empty() {
                format!(
                    "Unknown query parameter `{shown}`: this operation takes no query parameters."
                )
            } else {
                format!(
                    "Unknown query parameter `{shown}`; accepted: {}.",
                    accepted.join(", ")
                )
            };
            return Err(ApiError::new(ErrorCode::UnknownQueryParameter, msg)
                .with_field(shown)
                .with_detail("accepted_parameters", accepted.to_vec()));
        }
    }
    Ok(())
}

/// Parses `limit` and `before_id` of a list of the id kinds `kinds` (one, or the users' two;
/// never none), ignoring the list's other parameters (the `Caller` extractor refused unknown
/// ones before any handler runs).
pub fn parse(query: Option<&str>, kinds: &[IdKind]) -> Result<PageQuery, ApiError> {
    let mut page = PageQuery {
        limit: DEFAULT_PAGE_SIZE,
        before_id: None,
        q: None,
        oldest_first: false,
    };
    for (name, value) in form_urlencoded::parse(query.unwrap_or_default().as_bytes()) {
        match name.as_ref() {
            "limit" => {
                page.limit = value
                    .parse::<u32>()
                    .ok()
                    .filter(|n| (1..=MAX_PAGE_SIZE).contains(n))
                    .ok_or_else(|| {
                        ApiError::new(
                            ErrorCode::InvalidQueryParameter,
                            format!("`limit` must be a whole number from 1 to {MAX_PAGE_SIZE}."),
                        )
                        .with_field("limit")
                    })?;
            }
            "before_id" => {
                parse_id_of(kinds, &value).map_err(|e| {
                    ApiError::new(
                        ErrorCode::InvalidQueryParameter,
                        format!("`before_id`: {e}"),
                    )
                    .with_field("before_id")
                })?;
                page.before_id = Some(value.into_owned());
            }
            ORDER_PARAM => {
                page.oldest_first = match value.as_ref() {
                    "newest" => false,
                    "oldest" => true,
                    _ => {
                        let shown = error::quoted(&value);
                        return Err(ApiError::new(
                            ErrorCode::InvalidQueryParameter,
                            format!("`{ORDER_PARAM}` must be `newest` or `oldest`, not `{shown}`."),
                        )
                        .with_field(ORDER_PARAM));
                    }
                };
            }
            SEARCH_PARAM if !value.is_empty() => {
                if value.chars().count() > MAX_SEARCH_CHARS {
                    return Err(ApiError::new(
                        ErrorCode::InvalidQueryParameter,
                        format!("{SEARCH_PARAM} must be at most {MAX_SEARCH_CHARS} characters."),
                    )
                    .with_field(SEARCH_PARAM));
                }
                page.q = Some(value.into_owned());
            }
            _ => {}
        }
    }
    Ok(page)
}

/// The longest search (`q`), in characters: longer than any field it could be found in but
/// metadata, and a bound on what one search asks of the index.
pub const MAX_SEARCH_CHARS: usize = 255;

/// The absolute uri of the next page of `page`, `None` on the last page. `list_path` may carry a
/// query of its own (a list's filters), which the next page keeps, as it keeps the search.
pub fn next_page_uri(
    state: &AppState,
    list_path: &str,
    page: &PageQuery,
    more: bool,
    last_id: Option<&str>,
) -> Option<String> {
    match (more, last_id) {
        (true, Some(last)) => {
            let mut paging = paths::list_query(Some(page.limit), Some(last));
            if let Some(q) = &page.q {
                let q: String = form_urlencoded::byte_serialize(q.as_bytes()).collect();
                paging.push_str(&format!("&q={q}"));
            }
            if page.oldest_first {
                paging.push_str(&format!("&{ORDER_PARAM}=oldest"));
            }
            let paging = match list_path.contains('?') {
                true => paging.replacen('?', "&", 1),
                false => paging,
            };
            Some(state.uri(&format!("{list_path}{paging}")))
        }
        _ => None,
    }
}
