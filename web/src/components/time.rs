//! Times as people read them: "3 min ago", with the exact local and UTC time on hover, and the
//! conversions of the Activity page's time filters between the API's RFC 3339 (UTC) and the
//! browser's `datetime-local` fields (local time).
//!
//! The browser's own `Date` (through `js_sys`) does the parsing and the time zone, so no date
//! crate is compiled into the WASM. [`relative`] is pure arithmetic, testable anywhere.

use leptos::prelude::*;

const MINUTE: f64 = 60_000.0;
const HOUR: f64 = 60.0 * MINUTE;
const DAY: f64 = 24.0 * HOUR;

/// How long before `now_ms` the instant `then_ms` was, in words: "just now", "42 s ago",
/// "3 min ago", "5 h ago", "2 days ago"; older than 30 days, the date (UTC). A time a little in
/// the future (clocks disagree by a few seconds) is "just now"; further ahead, "in 3 min".
pub fn relative(then_ms: f64, now_ms: f64) -> String {
    let ago = now_ms - then_ms;
    if ago.is_nan() {
        return String::new();
    }
    if ago.abs() < 10_000.0 {
        return "just now".to_owned();
    }
    let (amount, future) = (ago.abs(), ago < 0.0);
    // Whole units as integers: formatting an `f64` would compile the float printing of `core`
    // (16 KB) into the WASM for these few numbers.
    let whole = |unit: f64| (amount / unit) as u64;
    let words = if amount < MINUTE {
        format!("{} s", whole(1000.0))
    } else if amount < HOUR {
        format!("{} min", whole(MINUTE))
    } else if amount < DAY {
        format!("{} h", whole(HOUR))
    } else if amount < 30.0 * DAY {
        match whole(DAY) {
            1 => "1 day".to_owned(),
            days => format!("{days} days"),
        }
    } else {
        return utc_date(then_ms);
    };
    if future {
        format!("in {words}")
    } else {
        format!("{words} ago")
    }
}

/// `YYYY-MM-DD` (UTC) of a Unix time in milliseconds, by the civil-from-days algorithm (no
/// `Date` needed, so [`relative`] stays pure).
fn utc_date(ms: f64) -> String {
    let days = (ms / DAY).floor() as i64;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

/// Milliseconds since the Unix epoch of an RFC 3339 time (`None` when the browser cannot read
/// it).
pub fn parse_ms(rfc3339: &str) -> Option<f64> {
    let ms = js_sys::Date::parse(rfc3339);
    (!ms.is_nan()).then_some(ms)
}

/// The exact time for the hover text: local time with its offset, then UTC.
pub fn exact(rfc3339: &str) -> String {
    let Some(ms) = parse_ms(rfc3339) else {
        return rfc3339.to_owned();
    };
    let d = js_sys::Date::new(&ms.into());
    // `getTimezoneOffset` is minutes *behind* UTC (UTC+1 gives -60).
    let offset = -d.get_timezone_offset();
    let sign = if offset < 0.0 { '-' } else { '+' };
    let offset = offset.abs() as u32;
    let utc = String::from(d.to_iso_string());
    let utc = utc.split('.').next().unwrap_or(&utc).replacen('T', " ", 1);
    format!(
        "{} local (UTC{sign}{:02}:{:02}) · {utc} UTC",
        local_text(&d, true).replacen('T', " ", 1),
        offset / 60,
        offset % 60
    )
}

/// `YYYY-MM-DDTHH:MM[:SS]` in the browser's time zone.
fn local_text(d: &js_sys::Date, seconds: bool) -> String {
    let mut text = format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}",
        d.get_full_year(),
        d.get_month() + 1,
        d.get_date(),
        d.get_hours(),
        d.get_minutes()
    );
    if seconds {
        text.push_str(&format!(":{:02}", d.get_seconds()));
    }
    text
}

/// The value of a `datetime-local` field for an RFC 3339 time (empty when unreadable).
pub fn to_local_input(rfc3339: &str) -> String {
    parse_ms(rfc3339)
        .map(|ms| local_text(&js_sys::Date::new(&ms.into()), false))
        .unwrap_or_default()
}

/// The RFC 3339 time (UTC) of a `datetime-local` field's value, read in the browser's time
/// zone; `None` for an empty or unreadable value.
pub fn from_local_input(value: &str) -> Option<String> {
    if value.is_empty() {
        return None;
    }
    // A date-time without an offset is local time to `Date`.
    let d = js_sys::Date::new(&value.into());
    (!d.get_time().is_nan()).then(|| {
        let iso = String::from(d.to_iso_string());
        // Whole seconds read better in a URL: `2026-11-22T09:30:00Z`.
        match iso.split_once('.') {
            Some((whole, _)) => format!("{whole}Z"),
            None => iso,
        }
    })
}

/// A time shown relative to now, moving on with the app's clock (`AppState::clock`), the exact
/// local and UTC time on hover (`title`), and the machine-readable time in `datetime`.
#[component]
pub fn RelativeTime(#[prop(into)] ts: String) -> impl IntoView {
    let text = match parse_ms(&ts) {
        Some(ms) => {
            let clock = crate::state::use_app().clock;
            // The clock moves in steps: a time shown between two is read against the moment it
            // is shown, so one just made never reads as "in 8 s".
            let shown_at = crate::state::now_ms();
            leptos::either::Either::Left(move || relative(ms, clock.get().max(shown_at)))
        }
        None => leptos::either::Either::Right(ts.clone()),
    };
    view! { <time class="time" datetime=ts.clone() title=exact(&ts)>{text}</time> }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

    #[test]
    fn relative_times_read_naturally() {
        let now = 1_795_000_000_000.0;
        assert_eq!(relative(now - 3_000.0, now), "just now");
        assert_eq!(relative(now + 5_000.0, now), "just now");
        assert_eq!(relative(now - 42_000.0, now), "42 s ago");
        assert_eq!(relative(now - 3.0 * MINUTE - 5_000.0, now), "3 min ago");
        assert_eq!(relative(now - 5.0 * HOUR, now), "5 h ago");
        assert_eq!(relative(now - DAY - HOUR, now), "1 day ago");
        assert_eq!(relative(now - 2.0 * DAY, now), "2 days ago");
        assert_eq!(relative(now + 3.0 * MINUTE, now), "in 3 min");
        assert_eq!(relative(0.0, now), "1970-01-01");
        assert_eq!(utc_date(1_795_000_000_000.0), "2026-11-18");
    }
}
