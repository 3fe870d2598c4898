-- Files that an attempt uploaded through the worker API but that never
-- became a job's result: the attempt ended otherwise (failed, retried,
-- cancelled, rescued after its lease ran out), was handed back at shutdown,
-- or uploaded another file in its place. The Pruner deletes each file from
-- storage, then its row. (Before, such files stayed in storage for good.)
-- A file a worker was to PUT through a presigned URL is deleted only once
-- that URL expired (`delete_after`): a late PUT cannot bring it back then.
CREATE TABLE discarded_files (
    storage_key text PRIMARY KEY,
    discarded_at timestamptz NOT NULL DEFAULT now(),
    delete_after timestamptz NOT NULL DEFAULT now()
);

-- Whatever statement lets go of an attempt's upload (`job_queue.uploaded_result`
-- replaced, cleared, or its row deleted when the job ends) records the file,
-- in its own transaction, unless the job's result is that file (a completion,
-- whose statement wrote `jobs.result` before this runs: row-level AFTER
-- triggers see all of the statement's changes). The WHEN clauses keep rows
-- without an upload, nearly all of them, from ever calling the function.
CREATE FUNCTION errand_discard_upload() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO discarded_files (storage_key, delete_after)
    SELECT OLD.uploaded_result->>'storage_key',
           greatest(now(), (OLD.uploaded_result->>'url_expires_at')::timestamptz)
    WHERE NOT EXISTS (SELECT 1 FROM jobs j
                      WHERE j.id = OLD.job_id AND j.result->>'storage_key' = OLD.uploaded_result->>'storage_key')
    ON CONFLICT DO NOTHING;
    RETURN NULL;
END
$$;

CREATE TRIGGER upload_replaced AFTER UPDATE OF uploaded_result ON job_queue FOR EACH ROW
WHEN (OLD.uploaded_result->>'storage_key' IS NOT NULL
      AND OLD.uploaded_result->>'storage_key' IS DISTINCT FROM NEW.uploaded_result->>'storage_key')
EXECUTE FUNCTION errand_discard_upload();

CREATE TRIGGER upload_dequeued AFTER DELETE ON job_queue FOR EACH ROW
WHEN (OLD.uploaded_result->>'storage_key' IS NOT NULL)
EXECUTE FUNCTION errand_discard_upload();
