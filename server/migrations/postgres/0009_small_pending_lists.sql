-- The trigram indexes' pending lists shrink from PostgreSQL's default 4 MB to its least, 64 kB
-- (docs/database.md, search). A GIN index takes new rows into a pending list and moves the list
-- into its tree once it outgrows the limit, inside whichever insert finds it full: with 4 MB that
-- insert took tens of milliseconds every couple of thousand creates, and the writes queued behind
-- it waited (`POST /api/credentials` p99 about 60 ms at 32 connections). With 64 kB the same work
-- comes in pieces a sixtieth the size, and a search, which reads the whole pending list, reads
-- less. Only the indexes' settings change: nothing is rebuilt.
ALTER INDEX credentials_search SET (gin_pending_list_limit = 64);
ALTER INDEX api_keys_search SET (gin_pending_list_limit = 64);
ALTER INDEX ssh_certificate_authorities_search SET (gin_pending_list_limit = 64);
ALTER INDEX tunnel_group_backends_search SET (gin_pending_list_limit = 64);
ALTER INDEX tls_edges_search SET (gin_pending_list_limit = 64);
ALTER INDEX event_destinations_search SET (gin_pending_list_limit = 64);
ALTER INDEX event_subscriptions_search SET (gin_pending_list_limit = 64);
ALTER INDEX tunnel_sessions_search SET (gin_pending_list_limit = 64);
ALTER INDEX principals_search SET (gin_pending_list_limit = 64);
