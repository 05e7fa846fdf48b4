-- The nodes of an installation and the live tunnel sessions each holds (docs/cluster.md).
-- A node renews its lease by heartbeat; sessions of a node whose lease ended are no longer
-- listed, and the first node to notice removes them. Times are Unix ms on the database's clock.
CREATE TABLE cluster_nodes (
    id TEXT PRIMARY KEY,
    advertise_url TEXT NOT NULL,
    incarnation TEXT NOT NULL, -- random, per process: two processes never share a membership
    joined_at TEXT NOT NULL,
    lease_until INTEGER NOT NULL
);

CREATE TABLE tunnel_sessions (
    id TEXT PRIMARY KEY, -- ts_…
    account_id TEXT NOT NULL,
    credential_id TEXT NOT NULL,
    node_id TEXT NOT NULL, -- the node whose connection holds the agent
    session TEXT NOT NULL, -- the wire form (JSON) as the session opened
    binds TEXT NOT NULL, -- JSON array of what the agent bound
    update_state TEXT -- JSON, as the agent last reported its update
);
CREATE INDEX tunnel_sessions_account ON tunnel_sessions(account_id, id);
CREATE INDEX tunnel_sessions_credential ON tunnel_sessions(credential_id);
CREATE INDEX tunnel_sessions_node ON tunnel_sessions(node_id);

-- Which node's worker holds a delivery's lease: a node that dies frees its leases when it is
-- removed, not all the leases of the installation at someone's start.
ALTER TABLE event_deliveries ADD COLUMN lease_node TEXT;
