-- The API caps the sessions a tenant has processing (dispatcher/quotas.py): it counts them,
-- up to the cap, on every submission. Only open sessions are indexed, so the index stays as
-- small as the work in flight.
CREATE INDEX IF NOT EXISTS sessions_open_by_tenant ON sessions (tenant) WHERE status = 'processing';
