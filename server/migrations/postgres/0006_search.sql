-- Searching lists (`q`, docs/api/README.md): a trigram GIN index (pg_trgm, a trusted extension
-- the database owner may create) on the lower-cased text a search looks in, per searchable
-- table. A search is `lower(<the same expression>) LIKE '%…%'`, which the index answers for 3
-- characters or more. The expressions are those the code builds from the tables' `SEARCH`
-- (a test checks they agree, since PostgreSQL uses an expression index only for the same
-- expression).
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE INDEX credentials_search ON credentials USING gin (lower(id || ' ' || description || ' ' || metadata || ' ' || acl || ' ' || owner_id) gin_trgm_ops);
CREATE INDEX api_keys_search ON api_keys USING gin (lower(id || ' ' || description || ' ' || metadata || ' ' || principal_id) gin_trgm_ops);
CREATE INDEX ssh_certificate_authorities_search ON ssh_certificate_authorities USING gin (lower(id || ' ' || description || ' ' || metadata || ' ' || key_type) gin_trgm_ops);
CREATE INDEX tunnel_group_backends_search ON tunnel_group_backends USING gin (lower(id || ' ' || description || ' ' || metadata || ' ' || labels) gin_trgm_ops);
CREATE INDEX tls_edges_search ON tls_edges USING gin (lower(id || ' ' || description || ' ' || metadata || ' ' || hostports) gin_trgm_ops);
CREATE INDEX event_destinations_search ON event_destinations USING gin (lower(id || ' ' || description || ' ' || metadata || ' ' || format || ' ' || target) gin_trgm_ops);
CREATE INDEX event_subscriptions_search ON event_subscriptions USING gin (lower(id || ' ' || description || ' ' || metadata || ' ' || sources) gin_trgm_ops);
CREATE INDEX tunnel_sessions_search ON tunnel_sessions USING gin (lower(id || ' ' || credential_id || ' ' || session) gin_trgm_ops);
