-- The search indexes leave the write's path (docs/database.md, search). Migrations 6 and 7 kept
-- one FTS5 trigram index per searchable table in this file, written by triggers inside every
-- write's transaction; merging their segments made one commit in a few hundred take 10-30 ms,
-- and every writer queued behind it waited. Now the indexes live in a file of their own beside
-- the database (`<file>-search`), written by the server's search indexer, and this file only
-- notes which rows changed: one row of `search_changes` per inserted, deleted or updated row
-- (an update only when a searched column changes), in the write's own transaction. A search
-- reads the index for the rows indexed and the rows themselves for those changed since
-- (`search_changes` past the index's progress), so it sees every committed write.
-- `search_source` names this database, so that an index built for another one (a backup put
-- back, a copy) is rebuilt rather than trusted.

DROP TRIGGER credentials_search_insert;
DROP TRIGGER credentials_search_delete;
DROP TRIGGER credentials_search_update;
DROP TABLE credentials_search;
DROP TRIGGER api_keys_search_insert;
DROP TRIGGER api_keys_search_delete;
DROP TRIGGER api_keys_search_update;
DROP TABLE api_keys_search;
DROP TRIGGER ssh_certificate_authorities_search_insert;
DROP TRIGGER ssh_certificate_authorities_search_delete;
DROP TRIGGER ssh_certificate_authorities_search_update;
DROP TABLE ssh_certificate_authorities_search;
DROP TRIGGER tunnel_group_backends_search_insert;
DROP TRIGGER tunnel_group_backends_search_delete;
DROP TRIGGER tunnel_group_backends_search_update;
DROP TABLE tunnel_group_backends_search;
DROP TRIGGER tls_edges_search_insert;
DROP TRIGGER tls_edges_search_delete;
DROP TRIGGER tls_edges_search_update;
DROP TABLE tls_edges_search;
DROP TRIGGER event_destinations_search_insert;
DROP TRIGGER event_destinations_search_delete;
DROP TRIGGER event_destinations_search_update;
DROP TABLE event_destinations_search;
DROP TRIGGER event_subscriptions_search_insert;
DROP TRIGGER event_subscriptions_search_delete;
DROP TRIGGER event_subscriptions_search_update;
DROP TABLE event_subscriptions_search;
DROP TRIGGER tunnel_sessions_search_insert;
DROP TRIGGER tunnel_sessions_search_delete;
DROP TRIGGER tunnel_sessions_search_update;
DROP TABLE tunnel_sessions_search;
DROP TRIGGER principals_search_insert;
DROP TRIGGER principals_search_delete;
DROP TRIGGER principals_search_update;
DROP TABLE principals_search;

CREATE TABLE search_changes (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    tbl TEXT NOT NULL,
    row INTEGER NOT NULL
);
CREATE TABLE search_source (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    token TEXT NOT NULL
);
INSERT INTO search_source (id, token) VALUES (1, lower(hex(randomblob(16))));

CREATE TRIGGER credentials_search_insert AFTER INSERT ON credentials BEGIN
    INSERT INTO search_changes (tbl, row) VALUES ('credentials', new.rowid);
END;
CREATE TRIGGER credentials_search_delete AFTER DELETE ON credentials BEGIN
    INSERT INTO search_changes (tbl, row) VALUES ('credentials', old.rowid);
END;
CREATE TRIGGER credentials_search_update AFTER UPDATE OF id, description, metadata, acl, owner_id ON credentials BEGIN
    INSERT INTO search_changes (tbl, row) VALUES ('credentials', new.rowid);
END;
CREATE TRIGGER api_keys_search_insert AFTER INSERT ON api_keys BEGIN
    INSERT INTO search_changes (tbl, row) VALUES ('api_keys', new.rowid);
END;
CREATE TRIGGER api_keys_search_delete AFTER DELETE ON api_keys BEGIN
    INSERT INTO search_changes (tbl, row) VALUES ('api_keys', old.rowid);
END;
CREATE TRIGGER api_keys_search_update AFTER UPDATE OF id, description, metadata, principal_id ON api_keys BEGIN
    INSERT INTO search_changes (tbl, row) VALUES ('api_keys', new.rowid);
END;
CREATE TRIGGER ssh_certificate_authorities_search_insert AFTER INSERT ON ssh_certificate_authorities BEGIN
    INSERT INTO search_changes (tbl, row) VALUES ('ssh_certificate_authorities', new.rowid);
END;
CREATE TRIGGER ssh_certificate_authorities_search_delete AFTER DELETE ON ssh_certificate_authorities BEGIN
    INSERT INTO search_changes (tbl, row) VALUES ('ssh_certificate_authorities', old.rowid);
END;
CREATE TRIGGER ssh_certificate_authorities_search_update AFTER UPDATE OF id, description, metadata, key_type ON ssh_certificate_authorities BEGIN
    INSERT INTO search_changes (tbl, row) VALUES ('ssh_certificate_authorities', new.rowid);
END;
CREATE TRIGGER tunnel_group_backends_search_insert AFTER INSERT ON tunnel_group_backends BEGIN
    INSERT INTO search_changes (tbl, row) VALUES ('tunnel_group_backends', new.rowid);
END;
CREATE TRIGGER tunnel_group_backends_search_delete AFTER DELETE ON tunnel_group_backends BEGIN
    INSERT INTO search_changes (tbl, row) VALUES ('tunnel_group_backends', old.rowid);
END;
CREATE TRIGGER tunnel_group_backends_search_update AFTER UPDATE OF id, description, metadata, labels ON tunnel_group_backends BEGIN
    INSERT INTO search_changes (tbl, row) VALUES ('tunnel_group_backends', new.rowid);
END;
CREATE TRIGGER tls_edges_search_insert AFTER INSERT ON tls_edges BEGIN
    INSERT INTO search_changes (tbl, row) VALUES ('tls_edges', new.rowid);
END;
CREATE TRIGGER tls_edges_search_delete AFTER DELETE ON tls_edges BEGIN
    INSERT INTO search_changes (tbl, row) VALUES ('tls_edges', old.rowid);
END;
CREATE TRIGGER tls_edges_search_update AFTER UPDATE OF id, description, metadata, hostports ON tls_edges BEGIN
    INSERT INTO search_changes (tbl, row) VALUES ('tls_edges', new.rowid);
END;
CREATE TRIGGER event_destinations_search_insert AFTER INSERT ON event_destinations BEGIN
    INSERT INTO search_changes (tbl, row) VALUES ('event_destinations', new.rowid);
END;
CREATE TRIGGER event_destinations_search_delete AFTER DELETE ON event_destinations BEGIN
    INSERT INTO search_changes (tbl, row) VALUES ('event_destinations', old.rowid);
END;
CREATE TRIGGER event_destinations_search_update AFTER UPDATE OF id, description, metadata, format, target ON event_destinations BEGIN
    INSERT INTO search_changes (tbl, row) VALUES ('event_destinations', new.rowid);
END;
CREATE TRIGGER event_subscriptions_search_insert AFTER INSERT ON event_subscriptions BEGIN
    INSERT INTO search_changes (tbl, row) VALUES ('event_subscriptions', new.rowid);
END;
CREATE TRIGGER event_subscriptions_search_delete AFTER DELETE ON event_subscriptions BEGIN
    INSERT INTO search_changes (tbl, row) VALUES ('event_subscriptions', old.rowid);
END;
CREATE TRIGGER event_subscriptions_search_update AFTER UPDATE OF id, description, metadata, sources ON event_subscriptions BEGIN
    INSERT INTO search_changes (tbl, row) VALUES ('event_subscriptions', new.rowid);
END;
CREATE TRIGGER tunnel_sessions_search_insert AFTER INSERT ON tunnel_sessions BEGIN
    INSERT INTO search_changes (tbl, row) VALUES ('tunnel_sessions', new.rowid);
END;
CREATE TRIGGER tunnel_sessions_search_delete AFTER DELETE ON tunnel_sessions BEGIN
    INSERT INTO search_changes (tbl, row) VALUES ('tunnel_sessions', old.rowid);
END;
CREATE TRIGGER tunnel_sessions_search_update AFTER UPDATE OF id, credential_id, session ON tunnel_sessions BEGIN
    INSERT INTO search_changes (tbl, row) VALUES ('tunnel_sessions', new.rowid);
END;
CREATE TRIGGER principals_search_insert AFTER INSERT ON principals BEGIN
    INSERT INTO search_changes (tbl, row) VALUES ('principals', new.rowid);
END;
CREATE TRIGGER principals_search_delete AFTER DELETE ON principals BEGIN
    INSERT INTO search_changes (tbl, row) VALUES ('principals', old.rowid);
END;
CREATE TRIGGER principals_search_update AFTER UPDATE OF id, name ON principals BEGIN
    INSERT INTO search_changes (tbl, row) VALUES ('principals', new.rowid);
END;
