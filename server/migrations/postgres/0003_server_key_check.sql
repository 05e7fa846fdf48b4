-- PostgreSQL twin of sqlite/0003_server_key_check.sql: a value sealed with the server key when
-- the database first meets one, so a server started with another key refuses to start.
CREATE TABLE server_key_check (
    id BIGINT PRIMARY KEY CHECK (id = 1),
    sealed BYTEA NOT NULL
);
