-- PostgreSQL twin of sqlite/0002_events.sql (same version, same tables and indexes). Text columns
-- compare bytewise (COLLATE "C"), so ids sort as they do on SQLite and in Rust whatever the
-- database's locale: keyset pages depend on it. Integers are BIGINT, bytes BYTEA.

-- Events (docs/api/events.md): the audit log, and the deliveries of events to webhook
-- destinations. An event is written in the transaction of the change it records, and its
-- deliveries in the same transaction, so a committed change is never without its event and a
-- queued delivery is never lost.

CREATE TABLE events (
    id TEXT COLLATE "C" PRIMARY KEY, -- ev_…, time-sortable like every id
    account_id TEXT COLLATE "C" NOT NULL REFERENCES accounts(id),
    type TEXT COLLATE "C" NOT NULL,
    occurred_at TEXT COLLATE "C" NOT NULL,
    actor_type TEXT COLLATE "C" NOT NULL, -- user | bot | agent | system
    actor_id TEXT COLLATE "C",
    api_key_id TEXT COLLATE "C",
    operation_id TEXT COLLATE "C",
    object_id TEXT COLLATE "C" NOT NULL,
    object TEXT COLLATE "C" NOT NULL, -- JSON: the object's API wire form, never a secret
    changed_fields TEXT COLLATE "C" NOT NULL, -- JSON array of wire field names
    details TEXT COLLATE "C" NOT NULL -- JSON object
);
-- Keyset pages of the audit log, unfiltered and by each filter.
CREATE INDEX events_account ON events(account_id, id);
CREATE INDEX events_account_type ON events(account_id, type, id);
CREATE INDEX events_account_object ON events(account_id, object_id, id);
CREATE INDEX events_account_actor ON events(account_id, actor_id, id);
-- Retention prunes by time across accounts.
CREATE INDEX events_occurred ON events(occurred_at);

-- The signing secret of a destination, sealed with the server key like SSH CA private keys;
-- after a rotation the previous one keeps signing until `previous_secret_until` (Unix ms).
ALTER TABLE event_destinations ADD COLUMN secret_sealed BYTEA;
ALTER TABLE event_destinations ADD COLUMN previous_secret_sealed BYTEA;
ALTER TABLE event_destinations ADD COLUMN previous_secret_until BIGINT;

-- One delivery per event and destination.
CREATE TABLE event_deliveries (
    id TEXT COLLATE "C" PRIMARY KEY, -- dlv_…
    account_id TEXT COLLATE "C" NOT NULL REFERENCES accounts(id),
    event_id TEXT COLLATE "C" NOT NULL REFERENCES events(id) ON DELETE CASCADE,
    destination_id TEXT COLLATE "C" NOT NULL REFERENCES event_destinations(id) ON DELETE CASCADE,
    created_at TEXT COLLATE "C" NOT NULL,
    state TEXT COLLATE "C" NOT NULL, -- pending | succeeded | failed
    attempt_count BIGINT NOT NULL DEFAULT 0,
    next_attempt_at BIGINT, -- Unix ms, while pending
    lease_until BIGINT -- Unix ms: a worker is sending it until then
);
CREATE INDEX event_deliveries_due ON event_deliveries(state, next_attempt_at);
CREATE INDEX event_deliveries_destination ON event_deliveries(destination_id, id);
CREATE INDEX event_deliveries_event ON event_deliveries(event_id);

CREATE TABLE event_delivery_attempts (
    delivery_id TEXT COLLATE "C" NOT NULL REFERENCES event_deliveries(id) ON DELETE CASCADE,
    attempt BIGINT NOT NULL, -- 1, 2, …
    attempted_at TEXT COLLATE "C" NOT NULL,
    status_code BIGINT,
    latency_ms BIGINT NOT NULL,
    error TEXT COLLATE "C",
    response_body TEXT COLLATE "C", -- the first 1 KiB
    PRIMARY KEY (delivery_id, attempt)
);
