-- Version 8 moves SQLite's search indexes off the write's path (the SQLite migration of the same
-- number). PostgreSQL's trigram indexes stay as migration 6 made them: nothing changes here, and
-- the version keeps both databases' numbers in step.
SELECT 1;
