-- Users and bots get a name (docs/api/users.md), which the operator's commands give and the
-- console shows wherever an owner appears; the ones made before have none (''). `GET /users`
-- searches the id and the name like every list: a trigram index as migration 6 builds.
ALTER TABLE principals ADD COLUMN name TEXT COLLATE "C" NOT NULL DEFAULT '';
CREATE INDEX principals_search ON principals USING gin (lower(id || ' ' || name) gin_trgm_ops);
