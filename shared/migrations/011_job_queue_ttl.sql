-- The table transport's message TTL (QUEUE_MESSAGE_TTL_MS, as on the broker's task queues):
-- each claim dead-letters the waiting rows of its queues enqueued before the cutoff, and
-- finds them through this index instead of reading every waiting row.
CREATE INDEX job_queue_waiting_since ON job_queue (queue, enqueued_at)
    WHERE status IN ('pending', 'retry');
