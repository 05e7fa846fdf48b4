-- Version 9 shrinks PostgreSQL's trigram indexes' pending lists (the PostgreSQL migration of the
-- same number). SQLite's search indexes are off the write's path since version 8: nothing changes
-- here, and the version keeps both databases' numbers in step.
SELECT 1;
