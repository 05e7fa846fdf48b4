//! The audit log (docs/api/events.md): an event is written by [`Store::emit`] inside the write
//! transaction of the change it records, together with one delivery per destination subscribed
//! to its type, so a rolled-back change leaves neither and a committed one has both. The API
//! layer says who caused the change ([`Cause`]) and how its rows look on the wire
//! (`records::Audit`); the store decides when, in the transaction, the event is written.
//!
//! Also: the events list with its filters (keyset pages on the `(account_id, id)` index, or on
//! the index of the filtered column), and retention.

use super::columns::{Fields, Value as Column, to_json};
use super::database::placeholders;
use super::{Dialect, PageQuery, Result, Store, WriteTx};
use serde_json::{Map, Value};
use std::sync::LazyLock;
use tunnel_core::ids::IdKind;
use tunnel_core::resources::event::{Actor, ActorKind};

/// Who caused a change, and in which API request. Serialisable: a command or close sent to
/// another node of the cluster carries it (`cluster`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Cause {
    pub actor: Actor,
    /// The request's operation id; `None` when no request caused it.
    pub operation_id: Option<String>,
}

impl Cause {
    /// The server itself, outside any request.
    pub fn system() -> Cause {
        Cause {
            actor: Actor::system(),
            operation_id: None,
        }
    }
}

/// An event to write: everything but its id, account and time, which the store gives it.
#[derive(Debug, Clone, PartialEq)]
pub struct NewEvent {
    pub event_type: String,
    pub cause: Cause,
    pub object_id: String,
    /// The object's wire form.
    pub object: Value,
    pub changed_fields: Vec<String>,
    pub details: Map<String, Value>,
}

/// The top-level fields whose values differ between two wire forms, in name order.
pub(super) fn changed_fields(before: &Value, after: &Value) -> Vec<String> {
    let (Value::Object(before), Value::Object(after)) = (before, after) else {
        return Vec::new();
    };
    after
        .iter()
        .filter(|(name, value)| before.get(name.as_str()) != Some(value))
        .map(|(name, _)| name.clone())
        .collect()
}

/// A statement changing rows of `table`, with its values (numbered from `$1`): what
/// [`Store::emit_after`] runs before its event.
#[derive(Debug)]
pub(super) struct Change {
    pub(super) table: &'static str,
    pub(super) sql: String,
    pub(super) values: Vec<Column>,
}

/// The insert of an event, its parameters numbered from `$first`.
fn event_insert(first: usize) -> String {
    format!(
        "INSERT INTO events (id, account_id, type, occurred_at, actor_type, actor_id, api_key_id, operation_id, object_id, object, changed_fields, details)
         VALUES ({})",
        placeholders(first, 12)
    )
}

/// The destinations subscribed to an event, as one text joined by `,` (`$account` and
/// `$event_type` its parameters).
fn subscribed(dialect: Dialect, account: usize, event_type: usize) -> String {
    format!(
        "SELECT {} AS destinations FROM (
            SELECT DISTINCT d.destination_id FROM event_subscriptions s
            JOIN event_subscription_destinations d ON d.subscription_id = s.id
            WHERE s.account_id = ${account}
            AND EXISTS (SELECT 1 FROM {} WHERE value = ${event_type})
         ) subscribed",
        dialect.join_texts("destination_id"),
        dialect.json_array_elements("s.sources"),
    )
}

/// SQLite's event insert and lookup: the same texts for every write, so made once.
static SQLITE_EVENT: LazyLock<[String; 2]> =
    LazyLock::new(|| [event_insert(1), subscribed(Dialect::Sqlite, 1, 2)]);

/// The tables the lookup of the destinations subscribed to an event reads.
const SUBSCRIPTION_TABLES: [&str; 2] = ["event_subscriptions", "event_subscription_destinations"];

/// A stored event.
#[derive(Debug, Clone, PartialEq)]
pub struct EventRow {
    pub id: String,
    pub event_type: String,
    pub occurred_at: String,
    pub actor: Actor,
    pub operation_id: Option<String>,
    pub object_id: String,
    pub object: Value,
    pub changed_fields: Vec<String>,
    pub details: Map<String, Value>,
}

/// The filters of the events list; each given one must match.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EventFilter {
    pub event_type: Option<String>,
    pub object_id: Option<String>,
    pub actor_id: Option<String>,
    /// Events at or after this instant (Unix ms).
    pub after_ms: Option<u64>,
    /// Events before this instant (Unix ms).
    pub before_ms: Option<u64>,
}

impl Store {
    /// Writes `event` in the account inside `tx`, and queues one delivery of it per destination
    /// of the account's subscriptions to its type (one per destination, however many of the
    /// subscriptions name it). The commit of `tx` wakes the delivery workers.
    pub(super) async fn emit(
        &self,
        tx: &mut WriteTx,
        account_id: &str,
        event: NewEvent,
    ) -> Result<String> {
        self.emit_after(tx, account_id, None, event).await
    }

    /// Runs `change` and then [`Store::emit`]s `event`. On PostgreSQL the two are one
    /// statement, the change in its `WITH`, and the destinations subscribed come back from a
    /// subquery of the event insert's `RETURNING`: one round trip rather than three (a round
    /// trip is most of what a statement costs there, and writes take turns). Not for a change
    /// of the subscriptions themselves: every part of one statement reads the database as it
    /// was when the statement began, so the lookup would still see a subscription being deleted
    /// (and deliver it the news of its own deletion), where run after the change it does not.
    pub(super) async fn emit_after(
        &self,
        tx: &mut WriteTx,
        account_id: &str,
        change: Option<Change>,
        event: NewEvent,
    ) -> Result<String> {
        let (id, occurred_at) = self.mint(IdKind::Event);
        let actor = &event.cause.actor;
        let mut exec = tx.exec();
        let (with, mut values) = match change {
            Some(change)
                if self.dialect == Dialect::Postgres
                    && !SUBSCRIPTION_TABLES.contains(&change.table) =>
            {
                (format!("WITH changed AS ({}) ", change.sql), change.values)
            }
            Some(change) => {
                exec.execute(&change.sql, &change.values).await?;
                (String::new(), Vec::new())
            }
            None => (String::new(), Vec::new()),
        };
        let first = values.len() + 1;
        values.extend([
            id.as_str().into(),
            account_id.into(),
            event.event_type.as_str().into(),
            occurred_at.into(),
            actor_kind(actor.kind).into(),
            actor.id.as_deref().into(),
            actor.api_key_id.as_deref().into(),
            event.cause.operation_id.as_deref().into(),
            event.object_id.as_str().into(),
            to_json(&event.object).into(),
            to_json(&event.changed_fields).into(),
            to_json(&event.details).into(),
        ]);
        let decode = |row: &dyn Fields| row.text("destinations");
        let subscribed = if self.dialect == Dialect::Postgres {
            // In the insert's `RETURNING`: the same round trip.
            let sql = format!(
                "{with}{} RETURNING ({}) AS destinations",
                event_insert(first),
                subscribed(Dialect::Postgres, first + 1, first + 2)
            );
            exec.fetch(&sql, &values, decode).await?
        } else {
            // A statement of its own: SQLite's `RETURNING` buffers its rows in a temporary
            // table, which cost more than the second statement (POST about 15 % slower).
            let [insert, lookup] = &*SQLITE_EVENT;
            exec.execute(insert, &values).await?;
            let of_type = [account_id.into(), event.event_type.as_str().into()];
            exec.fetch(lookup, &of_type, decode).await?
        };
        // Ids hold no comma (docs/ids.md); sorted, so deliveries are queued in a fixed order.
        let mut destinations: Vec<&str> = subscribed
            .iter()
            .flatten()
            .flat_map(|joined| joined.split(','))
            .collect();
        destinations.sort_unstable();
        let now_ms = unix_ms(time::OffsetDateTime::now_utc());
        for destination_id in &destinations {
            let (delivery_id, created_at) = self.mint(IdKind::EventDelivery);
            exec.execute(
                "INSERT INTO event_deliveries (id, account_id, event_id, destination_id, created_at, state, attempt_count, next_attempt_at)
                 VALUES ($1, $2, $3, $4, $5, 'pending', 0, $6)",
                &[
                    delivery_id.into(),
                    account_id.into(),
                    id.as_str().into(),
                    (*destination_id).into(),
                    created_at.into(),
                    now_ms.into(),
                ],
            )
            .await?;
        }
        tx.queued |= !destinations.is_empty();
        Ok(id)
    }

    /// Writes `event` on its own: for what changes no stored row (an agent command; a session's
    /// start and end are written with its directory row).
    pub async fn record_event(&self, account_id: &str, event: NewEvent) -> Result<String> {
        let mut tx = self.write_tx().await?;
        let id = self.emit(&mut tx, account_id, event).await?;
        tx.commit().await?;
        Ok(id)
    }

    /// One page of the account's events matching `filter`, newest first, `limit + 1` of them.
    pub async fn list_events(
        &self,
        account_id: &str,
        page: &PageQuery,
        filter: &EventFilter,
    ) -> Result<Vec<EventRow>> {
        // The time range is a range of ids (they start with their creation time, docs/ids.md),
        // so every filter is a range on one index: `(account_id, <column>, id)`.
        let mut sql = String::from("SELECT * FROM events WHERE account_id = $1");
        let mut binds: Vec<String> = vec![account_id.to_owned()];
        let mut columns = 0;
        for (column, value) in [
            ("type", &filter.event_type),
            ("object_id", &filter.object_id),
            ("actor_id", &filter.actor_id),
        ] {
            if let Some(value) = value {
                columns += 1;
                binds.push(value.clone());
                sql.push_str(&format!(" AND {column} = ${}", binds.len()));
            }
        }
        if let Some(after) = filter.after_ms {
            binds.push(tunnel_core::ids::make_id(IdKind::Event, after, [0; 14]));
            sql.push_str(&format!(" AND id >= ${}", binds.len()));
        }
        let upper = [
            filter
                .before_ms
                .map(|ms| tunnel_core::ids::make_id(IdKind::Event, ms, [0; 14])),
            page.before_id.clone(),
        ]
        .into_iter()
        .flatten()
        .min();
        if let Some(upper) = upper {
            binds.push(upper);
            sql.push_str(&format!(" AND id < ${}", binds.len()));
        }
        // The limit is a number of ours (validated), written into the statement.
        sql.push_str(&format!(
            " ORDER BY id DESC LIMIT {}",
            u64::from(page.limit) + 1
        ));
        // Two column filters range on one index and check the other row by row, which may
        // read many rows for a page: too long a read for this thread.
        self.read_events(&sql, &binds, columns <= 1).await
    }

    /// The event `id` of the account.
    pub async fn get_event(&self, account_id: &str, id: &str) -> Result<EventRow> {
        let sql = "SELECT * FROM events WHERE account_id = $1 AND id = $2";
        let found = self.read_events(sql, &[account_id, id], true).await?;
        match found.into_iter().next() {
            Some(event) => Ok(event),
            None => Err(super::Error::NotFound {
                kind: IdKind::Event,
                id: id.to_owned(),
            }),
        }
    }

    /// The events `sql` selects with `binds` in order: on a SQLite file on this thread
    /// (`super::direct`) when the statement reads few rows besides those it returns (`short`);
    /// on PostgreSQL through sqlx's PostgreSQL driver (`super::pg_reads`); else where
    /// [`Store::reading`] runs reads.
    async fn read_events<P: AsRef<str>>(
        &self,
        sql: &str,
        binds: &[P],
        short: bool,
    ) -> Result<Vec<EventRow>> {
        let binds: Vec<&str> = binds.iter().map(AsRef::as_ref).collect();
        if let Some(direct) = self.direct_reads().filter(|_| short) {
            return direct.read(sql, &binds, decode_event);
        }
        if let Some(rows) = &self.pg_rows {
            return rows.rows(sql, &binds, decode_event).await;
        }
        let mut query = sqlx::query(sql);
        for value in &binds {
            query = query.bind(*value);
        }
        let rows = self
            .reading(async |conn| Ok(query.fetch_all(conn).await?))
            .await?;
        rows.iter().map(|row| decode_event(row)).collect()
    }

    /// Deletes up to `batch` events that occurred before `before` (their deliveries and
    /// attempts go with them); the number deleted. Small batches in short transactions, so the
    /// writes of requests are never held up behind a long prune.
    pub async fn prune_events(&self, before: time::OffsetDateTime, batch: u32) -> Result<u64> {
        let mut tx = self.write_tx().await?;
        let done = sqlx::query(
            "DELETE FROM events WHERE id IN (SELECT id FROM events WHERE occurred_at < $1 LIMIT $2)",
        )
        .bind(super::rfc3339(before))
        .bind(i64::from(batch))
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(done.rows_affected())
    }
}

fn actor_kind(kind: ActorKind) -> &'static str {
    match kind {
        ActorKind::User => "user",
        ActorKind::Bot => "bot",
        ActorKind::Agent => "agent",
        ActorKind::System => "system",
    }
}

/// An event of the `events` table, from either driver's row.
fn decode_event(row: &dyn Fields) -> Result<EventRow> {
    let json = |name: &str| -> Result<Value> {
        let text = row.required_text(name)?;
        serde_json::from_str(&text).map_err(|e| sqlx::Error::Decode(Box::new(e)).into())
    };
    let kind = match row.required_text("actor_type")?.as_str() {
        "user" => ActorKind::User,
        "bot" => ActorKind::Bot,
        "agent" => ActorKind::Agent,
        _ => ActorKind::System,
    };
    Ok(EventRow {
        id: row.required_text("id")?,
        event_type: row.required_text("type")?,
        occurred_at: row.required_text("occurred_at")?,
        actor: Actor {
            kind,
            id: row.text("actor_id")?,
            api_key_id: row.text("api_key_id")?,
        },
        operation_id: row.text("operation_id")?,
        object_id: row.required_text("object_id")?,
        object: json("object")?,
        changed_fields: serde_json::from_value(json("changed_fields")?).unwrap_or_default(),
        details: match json("details")? {
            Value::Object(map) => map,
            _ => Map::new(),
        },
    })
}

/// Milliseconds since the Unix epoch.
pub(crate) fn unix_ms(t: time::OffsetDateTime) -> i64 {
    i64::try_from(t.unix_timestamp_nanos() / 1_000_000).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn changed_fields_are_the_top_level_fields_that_differ() {
        let before = json!({"id": "cr_1", "description": "a", "acl": ["bind:x"], "metadata": ""});
        let after = json!({"id": "cr_1", "description": "b", "acl": ["bind:y"], "metadata": ""});
        assert_eq!(changed_fields(&before, &after), ["acl", "description"]);
        assert!(changed_fields(&before, &before).is_empty());
    }
}
