-- API keys become a resource of the API (docs/api/api_keys.md): a description and metadata like
-- every resource, and the indexes of an account's list and of a member's own keys.
ALTER TABLE api_keys ADD COLUMN description TEXT NOT NULL DEFAULT '';
ALTER TABLE api_keys ADD COLUMN metadata TEXT NOT NULL DEFAULT '';
CREATE INDEX api_keys_account ON api_keys(account_id, id);
CREATE INDEX api_keys_principal ON api_keys(principal_id, id);
