-- A search of the tunnel sessions (`q`) looks in what docs/api/README.md names: the id, the
-- credential's id, and the agent's ip, OS, version and metadata. Until now it looked in the whole
-- stored wire form (`session`), field names, `uri`s and region included, so `q=http` or
-- `q=region` found every session. Those four values get columns of their own, filled from the
-- wire form for the sessions live now, and the search looks in them (`sessions::SEARCH`). The
-- search file's layout changes with it, so the indexer rebuilds it at the next start.
ALTER TABLE tunnel_sessions ADD COLUMN ip TEXT NOT NULL DEFAULT '';
ALTER TABLE tunnel_sessions ADD COLUMN os TEXT NOT NULL DEFAULT '';
ALTER TABLE tunnel_sessions ADD COLUMN agent_version TEXT NOT NULL DEFAULT '';
ALTER TABLE tunnel_sessions ADD COLUMN metadata TEXT NOT NULL DEFAULT '';
UPDATE tunnel_sessions SET
    ip = COALESCE(json_extract(session, '$.ip'), ''),
    os = COALESCE(json_extract(session, '$.os'), ''),
    agent_version = COALESCE(json_extract(session, '$.agent_version'), ''),
    metadata = COALESCE(json_extract(session, '$.metadata'), '');
DROP TRIGGER tunnel_sessions_search_update;
CREATE TRIGGER tunnel_sessions_search_update AFTER UPDATE OF id, credential_id, ip, os, agent_version, metadata ON tunnel_sessions BEGIN
    INSERT INTO search_changes (tbl, row) VALUES ('tunnel_sessions', new.rowid);
END;
