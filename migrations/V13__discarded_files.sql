-- Files that an attempt uploaded through the worker API but that never
-- became a job's result: the attempt ended otherwise (failed, retried,
-- cancelled, rescued after its lease ran out), was handed back at shutdown,
-- or uploaded another file after it. The statement that discards a file
-- records it here, in its own transaction; the Pruner deletes the file from
-- storage, then the row. (Before, such files stayed in storage for good.)
-- A file a worker was to PUT through a presigned URL is deleted only once
-- that URL expired (`delete_after`): a late PUT cannot bring it back then.
CREATE TABLE discarded_files (
    storage_key text PRIMARY KEY,
    discarded_at timestamptz NOT NULL DEFAULT now(),
    delete_after timestamptz NOT NULL DEFAULT now()
);
