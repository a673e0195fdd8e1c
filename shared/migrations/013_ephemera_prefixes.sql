-- `ephemera` is read by key prefix (the worker registry: every `{prefix}:workers:` key, read by
-- every API every few seconds), and LIKE 'prefix%' can use the primary key's btree only under
-- the C collation: this index serves it under any collation, instead of a scan of a day of
-- attempt lists.
CREATE INDEX ephemera_key_prefix ON ephemera (key text_pattern_ops);
