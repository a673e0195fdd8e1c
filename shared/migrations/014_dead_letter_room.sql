-- The table transport's dead letters are capped as the broker's DLQ is (DLQ_MAX_LENGTH rows,
-- DLQ_MAX_BYTES of bodies, reject-publish): a publisher asks for room before it dead-letters,
-- and a full DLQ refuses, so the letter's original is parked in a retry tier (as on
-- RabbitMQ), never a letter dropped. A deployment's dead letters are its DLQ's rows and its
-- task rows dead-lettered where they were (what `verdict dlq` lists). The worker roles see no
-- dead letter (row-level security), so the count runs as the function's owner; it tells a
-- caller only whether there is room, and only the roles granted it may ask (the app role by
-- the schema's default privileges, the worker roles by `verdict db provision`).
CREATE FUNCTION job_queue_dlq_room(dlq text, prefix text, max_rows bigint, max_bytes bigint,
                                   adding bigint)
RETURNS boolean LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
    SELECT count(*) < max_rows AND coalesce(sum(octet_length(body)), 0) + adding <= max_bytes
    FROM job_queue
    WHERE status = 'error' AND (queue = dlq OR starts_with(queue, prefix || '.'))
$$;
REVOKE EXECUTE ON FUNCTION job_queue_dlq_room(text, text, bigint, bigint, bigint) FROM PUBLIC;
