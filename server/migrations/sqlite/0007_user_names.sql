-- Users and bots get a name (docs/api/users.md), which the operator's commands give and the
-- console shows wherever an owner appears; the ones made before have none (''). `GET /users`
-- searches the id and the name like every list: an FTS5 trigram index as migration 6 builds.
ALTER TABLE principals ADD COLUMN name TEXT NOT NULL DEFAULT '';

CREATE VIRTUAL TABLE principals_search USING fts5(id, name, content='principals', content_rowid='rowid', tokenize='trigram');
CREATE TRIGGER principals_search_insert AFTER INSERT ON principals BEGIN
    INSERT INTO principals_search(rowid, id, name) VALUES (new.rowid, new.id, new.name);
END;
CREATE TRIGGER principals_search_delete AFTER DELETE ON principals BEGIN
    INSERT INTO principals_search(principals_search, rowid, id, name) VALUES ('delete', old.rowid, old.id, old.name);
END;
CREATE TRIGGER principals_search_update AFTER UPDATE OF id, name ON principals BEGIN
    INSERT INTO principals_search(principals_search, rowid, id, name) VALUES ('delete', old.rowid, old.id, old.name);
    INSERT INTO principals_search(rowid, id, name) VALUES (new.rowid, new.id, new.name);
END;
INSERT INTO principals_search(principals_search) VALUES ('rebuild');
