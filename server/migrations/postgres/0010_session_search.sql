-- PostgreSQL twin of sqlite/0010_session_search.sql: the sessions' search looks in their id,
-- credential id, ip, OS, agent version and metadata, no longer in the whole stored wire form
-- (whose field names, `uri`s and region matched every session). The four values get columns of
-- their own, filled for the sessions live now, and the trigram index is made again on the
-- expression the code builds from `sessions::SEARCH`, with the small pending list of migration 9.
ALTER TABLE tunnel_sessions
    ADD COLUMN ip TEXT COLLATE "C" NOT NULL DEFAULT '',
    ADD COLUMN os TEXT COLLATE "C" NOT NULL DEFAULT '',
    ADD COLUMN agent_version TEXT COLLATE "C" NOT NULL DEFAULT '',
    ADD COLUMN metadata TEXT COLLATE "C" NOT NULL DEFAULT '';
UPDATE tunnel_sessions SET
    ip = COALESCE(session::json ->> 'ip', ''),
    os = COALESCE(session::json ->> 'os', ''),
    agent_version = COALESCE(session::json ->> 'agent_version', ''),
    metadata = COALESCE(session::json ->> 'metadata', '');
DROP INDEX tunnel_sessions_search;
CREATE INDEX tunnel_sessions_search ON tunnel_sessions USING gin (lower(id || ' ' || credential_id || ' ' || ip || ' ' || os || ' ' || agent_version || ' ' || metadata) gin_trgm_ops) WITH (gin_pending_list_limit = 256);
