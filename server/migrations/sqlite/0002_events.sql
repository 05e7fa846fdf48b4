-- Events (docs/api/events.md): the audit log, and the deliveries of events to webhook
-- destinations. An event is written in the transaction of the change it records, and its
-- deliveries in the same transaction, so a committed change is never without its event and a
-- queued delivery is never lost.

CREATE TABLE events (
    id TEXT PRIMARY KEY, -- ev_…, time-sortable like every id
    account_id TEXT NOT NULL REFERENCES accounts(id),
    type TEXT NOT NULL,
    occurred_at TEXT NOT NULL,
    actor_type TEXT NOT NULL, -- user | bot | agent | system
    actor_id TEXT,
    api_key_id TEXT,
    operation_id TEXT,
    object_id TEXT NOT NULL,
    object TEXT NOT NULL, -- JSON: the object's API wire form, never a secret
    changed_fields TEXT NOT NULL, -- JSON array of wire field names
    details TEXT NOT NULL -- JSON object
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
ALTER TABLE event_destinations ADD COLUMN secret_sealed BLOB;
ALTER TABLE event_destinations ADD COLUMN previous_secret_sealed BLOB;
ALTER TABLE event_destinations ADD COLUMN previous_secret_until INTEGER;

-- One delivery per event and destination.
CREATE TABLE event_deliveries (
    id TEXT PRIMARY KEY, -- dlv_…
    account_id TEXT NOT NULL REFERENCES accounts(id),
    event_id TEXT NOT NULL REFERENCES events(id) ON DELETE CASCADE,
    destination_id TEXT NOT NULL REFERENCES event_destinations(id) ON DELETE CASCADE,
    created_at TEXT NOT NULL,
    state TEXT NOT NULL, -- pending | succeeded | failed
    attempt_count INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER, -- Unix ms, while pending
    lease_until INTEGER -- Unix ms: a worker is sending it until then
);
CREATE INDEX event_deliveries_due ON event_deliveries(state, next_attempt_at);
CREATE INDEX event_deliveries_destination ON event_deliveries(destination_id, id);
CREATE INDEX event_deliveries_event ON event_deliveries(event_id);

CREATE TABLE event_delivery_attempts (
    delivery_id TEXT NOT NULL REFERENCES event_deliveries(id) ON DELETE CASCADE,
    attempt INTEGER NOT NULL, -- 1, 2, …
    attempted_at TEXT NOT NULL,
    status_code INTEGER,
    latency_ms INTEGER NOT NULL,
    error TEXT,
    response_body TEXT, -- the first 1 KiB
    PRIMARY KEY (delivery_id, attempt)
);
