-- PostgreSQL twin of sqlite/0004_cluster.sql: the nodes of an installation and the live tunnel
-- sessions each holds (docs/cluster.md). Times are Unix ms on the database's clock.
CREATE TABLE cluster_nodes (
    id TEXT COLLATE "C" PRIMARY KEY,
    advertise_url TEXT COLLATE "C" NOT NULL,
    incarnation TEXT COLLATE "C" NOT NULL, -- random, per process: two processes never share a membership
    joined_at TEXT COLLATE "C" NOT NULL,
    lease_until BIGINT NOT NULL
);

CREATE TABLE tunnel_sessions (
    id TEXT COLLATE "C" PRIMARY KEY, -- ts_…
    account_id TEXT COLLATE "C" NOT NULL,
    credential_id TEXT COLLATE "C" NOT NULL,
    node_id TEXT COLLATE "C" NOT NULL,
    session TEXT COLLATE "C" NOT NULL,
    binds TEXT COLLATE "C" NOT NULL,
    update_state TEXT COLLATE "C"
);
CREATE INDEX tunnel_sessions_account ON tunnel_sessions(account_id, id);
CREATE INDEX tunnel_sessions_credential ON tunnel_sessions(credential_id);
CREATE INDEX tunnel_sessions_node ON tunnel_sessions(node_id);

ALTER TABLE event_deliveries ADD COLUMN lease_node TEXT COLLATE "C";
