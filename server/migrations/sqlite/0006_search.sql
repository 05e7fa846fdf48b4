-- Searching lists (`q`, docs/api/README.md): one FTS5 index with the trigram tokenizer per
-- searchable table, over the columns a search looks in, kept by triggers (an external-content
-- table: the text stays in the table itself; an update reindexes a row only when a searched
-- column changes). A search of 3 characters or more is a MATCH of
-- that index; shorter ones read the account's rows. The column lists are those of the tables'
-- `SEARCH` in the code (a test checks they agree).

CREATE VIRTUAL TABLE credentials_search USING fts5(id, description, metadata, acl, owner_id, content='credentials', content_rowid='rowid', tokenize='trigram');
CREATE TRIGGER credentials_search_insert AFTER INSERT ON credentials BEGIN
    INSERT INTO credentials_search(rowid, id, description, metadata, acl, owner_id) VALUES (new.rowid, new.id, new.description, new.metadata, new.acl, new.owner_id);
END;
CREATE TRIGGER credentials_search_delete AFTER DELETE ON credentials BEGIN
    INSERT INTO credentials_search(credentials_search, rowid, id, description, metadata, acl, owner_id) VALUES ('delete', old.rowid, old.id, old.description, old.metadata, old.acl, old.owner_id);
END;
CREATE TRIGGER credentials_search_update AFTER UPDATE OF id, description, metadata, acl, owner_id ON credentials BEGIN
    INSERT INTO credentials_search(credentials_search, rowid, id, description, metadata, acl, owner_id) VALUES ('delete', old.rowid, old.id, old.description, old.metadata, old.acl, old.owner_id);
    INSERT INTO credentials_search(rowid, id, description, metadata, acl, owner_id) VALUES (new.rowid, new.id, new.description, new.metadata, new.acl, new.owner_id);
END;
INSERT INTO credentials_search(credentials_search) VALUES ('rebuild');

CREATE VIRTUAL TABLE api_keys_search USING fts5(id, description, metadata, principal_id, content='api_keys', content_rowid='rowid', tokenize='trigram');
CREATE TRIGGER api_keys_search_insert AFTER INSERT ON api_keys BEGIN
    INSERT INTO api_keys_search(rowid, id, description, metadata, principal_id) VALUES (new.rowid, new.id, new.description, new.metadata, new.principal_id);
END;
CREATE TRIGGER api_keys_search_delete AFTER DELETE ON api_keys BEGIN
    INSERT INTO api_keys_search(api_keys_search, rowid, id, description, metadata, principal_id) VALUES ('delete', old.rowid, old.id, old.description, old.metadata, old.principal_id);
END;
CREATE TRIGGER api_keys_search_update AFTER UPDATE OF id, description, metadata, principal_id ON api_keys BEGIN
    INSERT INTO api_keys_search(api_keys_search, rowid, id, description, metadata, principal_id) VALUES ('delete', old.rowid, old.id, old.description, old.metadata, old.principal_id);
    INSERT INTO api_keys_search(rowid, id, description, metadata, principal_id) VALUES (new.rowid, new.id, new.description, new.metadata, new.principal_id);
END;
INSERT INTO api_keys_search(api_keys_search) VALUES ('rebuild');

CREATE VIRTUAL TABLE ssh_certificate_authorities_search USING fts5(id, description, metadata, key_type, content='ssh_certificate_authorities', content_rowid='rowid', tokenize='trigram');
CREATE TRIGGER ssh_certificate_authorities_search_insert AFTER INSERT ON ssh_certificate_authorities BEGIN
    INSERT INTO ssh_certificate_authorities_search(rowid, id, description, metadata, key_type) VALUES (new.rowid, new.id, new.description, new.metadata, new.key_type);
END;
CREATE TRIGGER ssh_certificate_authorities_search_delete AFTER DELETE ON ssh_certificate_authorities BEGIN
    INSERT INTO ssh_certificate_authorities_search(ssh_certificate_authorities_search, rowid, id, description, metadata, key_type) VALUES ('delete', old.rowid, old.id, old.description, old.metadata, old.key_type);
END;
CREATE TRIGGER ssh_certificate_authorities_search_update AFTER UPDATE OF id, description, metadata, key_type ON ssh_certificate_authorities BEGIN
    INSERT INTO ssh_certificate_authorities_search(ssh_certificate_authorities_search, rowid, id, description, metadata, key_type) VALUES ('delete', old.rowid, old.id, old.description, old.metadata, old.key_type);
    INSERT INTO ssh_certificate_authorities_search(rowid, id, description, metadata, key_type) VALUES (new.rowid, new.id, new.description, new.metadata, new.key_type);
END;
INSERT INTO ssh_certificate_authorities_search(ssh_certificate_authorities_search) VALUES ('rebuild');

CREATE VIRTUAL TABLE tunnel_group_backends_search USING fts5(id, description, metadata, labels, content='tunnel_group_backends', content_rowid='rowid', tokenize='trigram');
CREATE TRIGGER tunnel_group_backends_search_insert AFTER INSERT ON tunnel_group_backends BEGIN
    INSERT INTO tunnel_group_backends_search(rowid, id, description, metadata, labels) VALUES (new.rowid, new.id, new.description, new.metadata, new.labels);
END;
CREATE TRIGGER tunnel_group_backends_search_delete AFTER DELETE ON tunnel_group_backends BEGIN
    INSERT INTO tunnel_group_backends_search(tunnel_group_backends_search, rowid, id, description, metadata, labels) VALUES ('delete', old.rowid, old.id, old.description, old.metadata, old.labels);
END;
CREATE TRIGGER tunnel_group_backends_search_update AFTER UPDATE OF id, description, metadata, labels ON tunnel_group_backends BEGIN
    INSERT INTO tunnel_group_backends_search(tunnel_group_backends_search, rowid, id, description, metadata, labels) VALUES ('delete', old.rowid, old.id, old.description, old.metadata, old.labels);
    INSERT INTO tunnel_group_backends_search(rowid, id, description, metadata, labels) VALUES (new.rowid, new.id, new.description, new.metadata, new.labels);
END;
INSERT INTO tunnel_group_backends_search(tunnel_group_backends_search) VALUES ('rebuild');

CREATE VIRTUAL TABLE tls_edges_search USING fts5(id, description, metadata, hostports, content='tls_edges', content_rowid='rowid', tokenize='trigram');
CREATE TRIGGER tls_edges_search_insert AFTER INSERT ON tls_edges BEGIN
    INSERT INTO tls_edges_search(rowid, id, description, metadata, hostports) VALUES (new.rowid, new.id, new.description, new.metadata, new.hostports);
END;
CREATE TRIGGER tls_edges_search_delete AFTER DELETE ON tls_edges BEGIN
    INSERT INTO tls_edges_search(tls_edges_search, rowid, id, description, metadata, hostports) VALUES ('delete', old.rowid, old.id, old.description, old.metadata, old.hostports);
END;
CREATE TRIGGER tls_edges_search_update AFTER UPDATE OF id, description, metadata, hostports ON tls_edges BEGIN
    INSERT INTO tls_edges_search(tls_edges_search, rowid, id, description, metadata, hostports) VALUES ('delete', old.rowid, old.id, old.description, old.metadata, old.hostports);
    INSERT INTO tls_edges_search(rowid, id, description, metadata, hostports) VALUES (new.rowid, new.id, new.description, new.metadata, new.hostports);
END;
INSERT INTO tls_edges_search(tls_edges_search) VALUES ('rebuild');

CREATE VIRTUAL TABLE event_destinations_search USING fts5(id, description, metadata, format, target, content='event_destinations', content_rowid='rowid', tokenize='trigram');
CREATE TRIGGER event_destinations_search_insert AFTER INSERT ON event_destinations BEGIN
    INSERT INTO event_destinations_search(rowid, id, description, metadata, format, target) VALUES (new.rowid, new.id, new.description, new.metadata, new.format, new.target);
END;
CREATE TRIGGER event_destinations_search_delete AFTER DELETE ON event_destinations BEGIN
    INSERT INTO event_destinations_search(event_destinations_search, rowid, id, description, metadata, format, target) VALUES ('delete', old.rowid, old.id, old.description, old.metadata, old.format, old.target);
END;
CREATE TRIGGER event_destinations_search_update AFTER UPDATE OF id, description, metadata, format, target ON event_destinations BEGIN
    INSERT INTO event_destinations_search(event_destinations_search, rowid, id, description, metadata, format, target) VALUES ('delete', old.rowid, old.id, old.description, old.metadata, old.format, old.target);
    INSERT INTO event_destinations_search(rowid, id, description, metadata, format, target) VALUES (new.rowid, new.id, new.description, new.metadata, new.format, new.target);
END;
INSERT INTO event_destinations_search(event_destinations_search) VALUES ('rebuild');

CREATE VIRTUAL TABLE event_subscriptions_search USING fts5(id, description, metadata, sources, content='event_subscriptions', content_rowid='rowid', tokenize='trigram');
CREATE TRIGGER event_subscriptions_search_insert AFTER INSERT ON event_subscriptions BEGIN
    INSERT INTO event_subscriptions_search(rowid, id, description, metadata, sources) VALUES (new.rowid, new.id, new.description, new.metadata, new.sources);
END;
CREATE TRIGGER event_subscriptions_search_delete AFTER DELETE ON event_subscriptions BEGIN
    INSERT INTO event_subscriptions_search(event_subscriptions_search, rowid, id, description, metadata, sources) VALUES ('delete', old.rowid, old.id, old.description, old.metadata, old.sources);
END;
CREATE TRIGGER event_subscriptions_search_update AFTER UPDATE OF id, description, metadata, sources ON event_subscriptions BEGIN
    INSERT INTO event_subscriptions_search(event_subscriptions_search, rowid, id, description, metadata, sources) VALUES ('delete', old.rowid, old.id, old.description, old.metadata, old.sources);
    INSERT INTO event_subscriptions_search(rowid, id, description, metadata, sources) VALUES (new.rowid, new.id, new.description, new.metadata, new.sources);
END;
INSERT INTO event_subscriptions_search(event_subscriptions_search) VALUES ('rebuild');

CREATE VIRTUAL TABLE tunnel_sessions_search USING fts5(id, credential_id, session, content='tunnel_sessions', content_rowid='rowid', tokenize='trigram');
CREATE TRIGGER tunnel_sessions_search_insert AFTER INSERT ON tunnel_sessions BEGIN
    INSERT INTO tunnel_sessions_search(rowid, id, credential_id, session) VALUES (new.rowid, new.id, new.credential_id, new.session);
END;
CREATE TRIGGER tunnel_sessions_search_delete AFTER DELETE ON tunnel_sessions BEGIN
    INSERT INTO tunnel_sessions_search(tunnel_sessions_search, rowid, id, credential_id, session) VALUES ('delete', old.rowid, old.id, old.credential_id, old.session);
END;
CREATE TRIGGER tunnel_sessions_search_update AFTER UPDATE OF id, credential_id, session ON tunnel_sessions BEGIN
    INSERT INTO tunnel_sessions_search(tunnel_sessions_search, rowid, id, credential_id, session) VALUES ('delete', old.rowid, old.id, old.credential_id, old.session);
    INSERT INTO tunnel_sessions_search(rowid, id, credential_id, session) VALUES (new.rowid, new.id, new.credential_id, new.session);
END;
INSERT INTO tunnel_sessions_search(tunnel_sessions_search) VALUES ('rebuild');
