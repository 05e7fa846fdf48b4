-- PostgreSQL twin of sqlite/0001_initial.sql (same version, same tables and indexes). Text columns
-- compare bytewise (COLLATE "C"), so ids sort as they do on SQLite and in Rust whatever the
-- database's locale: keyset pages depend on it. Integers are BIGINT, bytes BYTEA.

-- Initial schema. Every resource row carries its account: every query is scoped by it, so a
-- resource of another account simply does not exist for the caller (docs/api/README.md).
-- Ids are time-sortable (docs/ids.md); the (account_id, id) indexes serve keyset pagination.

CREATE TABLE accounts (
    id TEXT COLLATE "C" PRIMARY KEY,
    name TEXT COLLATE "C" NOT NULL,
    created_at TEXT COLLATE "C" NOT NULL
);

-- Users (usr_) and bots (bot_) of an account.
CREATE TABLE principals (
    id TEXT COLLATE "C" PRIMARY KEY,
    account_id TEXT COLLATE "C" NOT NULL REFERENCES accounts(id),
    is_admin BIGINT NOT NULL,
    created_at TEXT COLLATE "C" NOT NULL
);
CREATE INDEX principals_account ON principals(account_id, id);

-- API keys: only the SHA-256 of the key is stored; `lookup` is the public first part.
CREATE TABLE api_keys (
    id TEXT COLLATE "C" PRIMARY KEY,
    lookup TEXT COLLATE "C" NOT NULL UNIQUE,
    secret_hash BYTEA NOT NULL,
    principal_id TEXT COLLATE "C" NOT NULL REFERENCES principals(id),
    account_id TEXT COLLATE "C" NOT NULL REFERENCES accounts(id),
    created_at TEXT COLLATE "C" NOT NULL
);

CREATE TABLE credentials (
    id TEXT COLLATE "C" PRIMARY KEY,
    account_id TEXT COLLATE "C" NOT NULL REFERENCES accounts(id),
    lookup TEXT COLLATE "C" NOT NULL UNIQUE,
    secret_hash BYTEA NOT NULL,
    created_at TEXT COLLATE "C" NOT NULL,
    description TEXT COLLATE "C" NOT NULL,
    metadata TEXT COLLATE "C" NOT NULL,
    acl TEXT COLLATE "C" NOT NULL, -- JSON array of rules
    owner_id TEXT COLLATE "C" NOT NULL REFERENCES principals(id)
);
CREATE INDEX credentials_account ON credentials(account_id, id);

CREATE TABLE ssh_certificate_authorities (
    id TEXT COLLATE "C" PRIMARY KEY,
    account_id TEXT COLLATE "C" NOT NULL REFERENCES accounts(id),
    created_at TEXT COLLATE "C" NOT NULL,
    description TEXT COLLATE "C" NOT NULL,
    metadata TEXT COLLATE "C" NOT NULL,
    key_type TEXT COLLATE "C" NOT NULL,
    public_key TEXT COLLATE "C" NOT NULL,
    private_key_sealed BYTEA NOT NULL -- nonce || ChaCha20-Poly1305 ciphertext (keys.rs)
);
CREATE INDEX ssh_cas_account ON ssh_certificate_authorities(account_id, id);

CREATE TABLE tunnel_group_backends (
    id TEXT COLLATE "C" PRIMARY KEY,
    account_id TEXT COLLATE "C" NOT NULL REFERENCES accounts(id),
    created_at TEXT COLLATE "C" NOT NULL,
    description TEXT COLLATE "C" NOT NULL,
    metadata TEXT COLLATE "C" NOT NULL,
    labels TEXT COLLATE "C" NOT NULL -- JSON object
);
CREATE INDEX backends_account ON tunnel_group_backends(account_id, id);

CREATE TABLE tls_edges (
    id TEXT COLLATE "C" PRIMARY KEY,
    account_id TEXT COLLATE "C" NOT NULL REFERENCES accounts(id),
    created_at TEXT COLLATE "C" NOT NULL,
    description TEXT COLLATE "C" NOT NULL,
    metadata TEXT COLLATE "C" NOT NULL,
    hostports TEXT COLLATE "C" NOT NULL, -- JSON array
    -- The backend module: both NULL when none is set. No ON DELETE: a backend in use cannot go.
    backend_id TEXT COLLATE "C" REFERENCES tunnel_group_backends(id),
    backend_enabled BIGINT
);
CREATE INDEX tls_edges_account ON tls_edges(account_id, id);
CREATE INDEX tls_edges_backend ON tls_edges(backend_id);

CREATE TABLE event_destinations (
    id TEXT COLLATE "C" PRIMARY KEY,
    account_id TEXT COLLATE "C" NOT NULL REFERENCES accounts(id),
    created_at TEXT COLLATE "C" NOT NULL,
    description TEXT COLLATE "C" NOT NULL,
    metadata TEXT COLLATE "C" NOT NULL,
    format TEXT COLLATE "C" NOT NULL,
    target TEXT COLLATE "C" NOT NULL -- JSON object
);
CREATE INDEX event_destinations_account ON event_destinations(account_id, id);

CREATE TABLE event_subscriptions (
    id TEXT COLLATE "C" PRIMARY KEY,
    account_id TEXT COLLATE "C" NOT NULL REFERENCES accounts(id),
    created_at TEXT COLLATE "C" NOT NULL,
    description TEXT COLLATE "C" NOT NULL,
    metadata TEXT COLLATE "C" NOT NULL,
    sources TEXT COLLATE "C" NOT NULL -- JSON array of event types, in request order
);
CREATE INDEX event_subscriptions_account ON event_subscriptions(account_id, id);

-- Destinations of a subscription: a join table so a destination in use cannot be deleted.
CREATE TABLE event_subscription_destinations (
    subscription_id TEXT COLLATE "C" NOT NULL REFERENCES event_subscriptions(id) ON DELETE CASCADE,
    position BIGINT NOT NULL,
    destination_id TEXT COLLATE "C" NOT NULL REFERENCES event_destinations(id),
    PRIMARY KEY (subscription_id, destination_id)
);
CREATE INDEX event_subscription_destinations_dest ON event_subscription_destinations(destination_id);
