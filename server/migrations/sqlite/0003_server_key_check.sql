-- A value sealed with the server key when the database first meets one: a server started with
-- another key (a lost server.key, a node given the wrong TUNNEL_SERVER_KEY) refuses to start
-- instead of sealing new secrets with a key that cannot open the old ones.
CREATE TABLE server_key_check (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    sealed BLOB NOT NULL
);
