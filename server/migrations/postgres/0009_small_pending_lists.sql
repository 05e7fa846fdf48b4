-- The trigram indexes' pending lists shrink from PostgreSQL's default 4 MB to 256 kB
-- (docs/database.md, search). A GIN index takes new rows into a pending list and moves the list
-- into its tree once it outgrows the limit, inside whichever insert finds it full: with 4 MB that
-- insert took tens of milliseconds every couple of thousand creates, and the writes queued behind
-- it waited (`POST /api/credentials` p99 60-95 ms at 32 connections). With 256 kB the same work
-- comes in pieces a sixteenth the size (p99 24-29 ms), and a search, which reads the whole pending
-- list, reads less. Smaller still (64 kB) cost about 15 % of the writes a second for no better
-- p99: each move does fixed work per trigram, so moves of few rows each cost more in all. Only
-- the indexes' settings change: nothing is rebuilt.
ALTER INDEX credentials_search SET (gin_pending_list_limit = 256);
ALTER INDEX api_keys_search SET (gin_pending_list_limit = 256);
ALTER INDEX ssh_certificate_authorities_search SET (gin_pending_list_limit = 256);
ALTER INDEX tunnel_group_backends_search SET (gin_pending_list_limit = 256);
ALTER INDEX tls_edges_search SET (gin_pending_list_limit = 256);
ALTER INDEX event_destinations_search SET (gin_pending_list_limit = 256);
ALTER INDEX event_subscriptions_search SET (gin_pending_list_limit = 256);
ALTER INDEX tunnel_sessions_search SET (gin_pending_list_limit = 256);
ALTER INDEX principals_search SET (gin_pending_list_limit = 256);
