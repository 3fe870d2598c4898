-- Notification preferences (issue 21): each user chooses, per category of
-- job (a job type's `category`, its own name by default) and per channel,
-- whether a job's end reaches them in the app (the feed and live streams)
-- and by email. A category the configuration marks required cannot be
-- turned off.
--
-- Only the choices a user made are stored; NULL is "the configured default".
-- The defaults, the required categories and which category each job type
-- belongs to are configuration, the same in every process: each statement
-- that ends a job hands them to `errand_channels` as JSON (see
-- `domain/preferences.rs`), which is where the rule lives, once.
CREATE TABLE notification_preferences (
    tenant_id  text NOT NULL,
    user_id    text NOT NULL,
    category   text NOT NULL,
    in_app     boolean,
    email      boolean,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, user_id, category)
);

-- Whether the end of a job of category `category` reaches user `user` of
-- `tenant` in the app and by email, under `rules`:
-- {"in_app": bool, "email": bool, "required": [category, …]} (the defaults,
-- and the categories no one can turn off). Read in the statement that ends
-- the job, so a change counts from the next end on, with no cache to wait out.
CREATE FUNCTION errand_channels(tenant text, "user" text, category text, rules jsonb)
RETURNS TABLE (in_app boolean, email boolean)
LANGUAGE sql STABLE
AS $$
    -- (`errand_channels.category` is the argument: a bare name would be p's column.)
    SELECT r.required OR coalesce(p.in_app, (rules->>'in_app')::boolean, true),
           r.required OR coalesce(p.email, (rules->>'email')::boolean, true)
    FROM (SELECT coalesce(rules->'required' ? errand_channels.category, false) AS required) r
    LEFT JOIN notification_preferences p
           ON p.tenant_id = tenant AND p.user_id = "user" AND p.category = errand_channels.category
$$;

-- A job type's category under `rules` ({"categories": {job type: category}}):
-- its own name when the rules do not say (a type no longer configured).
CREATE FUNCTION errand_category(job_type text, rules jsonb) RETURNS text
LANGUAGE sql IMMUTABLE
RETURN coalesce(rules->'categories'->>job_type, job_type);
