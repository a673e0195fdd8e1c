-- Idempotency-Key (issue 10): a session keeps the SHA-256 of the request that created it,
-- so a key reused with a different request is refused (409) instead of answered with the
-- first session. Sessions from before this migration have none and are never refused.
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS request_hash text;
