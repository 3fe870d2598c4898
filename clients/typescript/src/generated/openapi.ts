/**
 * Generated from errand's GET /openapi.json (an errand started with the
 * repository's config.toml) by openapi-typescript: do not edit.
 * Regenerate with `clients/typescript/run-tests.sh --generate`
 * (or `npm run generate`); the tests fail while this file differs from a
 * fresh generation.
 */

export interface paths {
    "/admin/actions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** `GET /admin/actions`: operators' actions, newest first. */
        get: operations["get_admin_actions"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/erasures": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * `POST /admin/erasures`: erases (or counts) what errand keeps of a
         *     tenant's user, or of the whole tenant.
         */
        post: operations["erase_for_operator"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/jobs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** `GET /admin/jobs`: any tenant's jobs, newest first. */
        get: operations["get_admin_jobs"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/jobs/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * `GET /admin/jobs/{id}`: any tenant's job, with its attempts, what its
         *     ends sent and the operator actions taken on it.
         */
        get: operations["get_admin_jobs_by_id"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/jobs/{id}/cancel": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * `POST /admin/jobs/{id}/cancel`: as the owner's cancel, and the owner is
         *     notified (in-app and by email) once it is cancelled.
         */
        post: operations["post_admin_jobs_by_id_cancel"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/jobs/{id}/hold": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * `POST /admin/jobs/{id}/hold`: a waiting job stays waiting, its place in
         *     line kept, and no process claims it until it is released.
         */
        post: operations["hold"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/jobs/{id}/release": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** `POST /admin/jobs/{id}/release`: a held job may be claimed again, at once. */
        post: operations["release"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/jobs/{id}/retry": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * `POST /admin/jobs/{id}/retry`: a failed or cancelled job goes back to the
         *     queue, same id and key, as a new run with a fresh attempt budget; it ends
         *     with a notification of its own (the old one stays).
         */
        post: operations["retry"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/jobs/cancel": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * `POST /admin/jobs/cancel`: cancels the unfinished jobs the filter matches
         *     (a running one is asked to stop, as one job's cancel does); each owner is
         *     notified as for an operator's cancel.
         */
        post: operations["cancel_matching"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/jobs/retry": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * `POST /admin/jobs/retry`: retries the failed jobs the filter matches
         *     (e.g. every failed `export_sales_report` of one tenant in the last hour).
         */
        post: operations["retry_matching"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/overview": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** `GET /admin/overview`: counts, backlogs, processes and the database. */
        get: operations["read"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/pauses": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * `GET /admin/pauses`: the pauses that hold now and those whose scope
         *     ramps, oldest first.
         */
        get: operations["get_admin_pauses"];
        put?: never;
        /**
         * `POST /admin/pauses`: pauses a scope. No claim begun after the answer,
         *     in any process, takes a waiting job of it. A scope paused already takes
         *     the new reason and end (200).
         */
        post: operations["pause"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/pauses/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /**
         * `DELETE /admin/pauses/{id}`: resumes the pause's scope; its waiting jobs
         *     start as room allows, the scope ramping. A pause whose scope ramps
         *     already has its ramp ended.
         */
        delete: operations["resume"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/queues": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * `GET /admin/queues`: per job type and state, the counts of waiting,
         *     retrying and running jobs and the oldest due job's wait, and who is
         *     nearest to their quotas, read from the queue table alone (it holds
         *     unfinished jobs only).
         */
        get: operations["queues"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/schedules": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** `GET /admin/schedules?tenant=&user=`: any tenant's schedules, newest first (at most 500). */
        get: operations["list_for_operator"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/schedules/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** `DELETE /admin/schedules/{id}`: deletes any tenant's schedule (audited; its jobs stay). */
        delete: operations["delete_for_operator"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/schedules/{id}/pause": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** `POST /admin/schedules/{id}/pause`: pauses any tenant's schedule (audited); its owner may resume it. */
        post: operations["pause_for_operator"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/templates/preview": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** `GET /admin/templates/preview?tenant=&kind=`: an email as a tenant's users get it, with sample content. */
        get: operations["preview_for_operator"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/tenants/{tenant}/quotas": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * `GET /admin/tenants/{tenant}/quotas`: the tenant's override, the caps that
         *     hold, and its unfinished jobs now.
         */
        get: operations["get_admin_tenants_by_tenant_quotas"];
        /**
         * `PUT /admin/tenants/{tenant}/quotas`: sets the tenant's override. A field
         *     left out or `null` takes the configured cap; both `null` remove the override.
         */
        put: operations["put_admin_tenants_by_tenant_quotas"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/tenants/{tenant}/retention": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** `GET /admin/tenants/{tenant}/retention`: the tenant's own retentions. */
        get: operations["get_admin_tenants_by_tenant_retention"];
        /**
         * `PUT /admin/tenants/{tenant}/retention[?type=]`: sets the tenant's own
         *     retentions, for all its types or (`type`) one; `null` (or absent) at
         *     both: the type's and the configured ones hold again.
         */
        put: operations["put_admin_tenants_by_tenant_retention"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/batches/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** `GET /batches/{id}`: the caller's batch and its counts, or 404. */
        get: operations["get_batches_by_id"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/batches/{id}/cancel": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * `POST /batches/{id}/cancel`: cancels the batch's children that have not
         *     started (running ones finish); asking again changes nothing more. The
         *     batch's one notification comes when its last child ended, as ever.
         */
        post: operations["post_batches_by_id_cancel"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/batches/{id}/report": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * `GET /batches/{id}/report`: the batch's children that failed or were
         *     cancelled, as CSV (`job_id,status,error,params`), streamed.
         */
        get: operations["report"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/batches/{job_type}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * `POST /batches/{type}`: record a batch and its children (or find the
         *     batch the key names) and answer at once.
         */
        post: operations["post_batches_by_job_type"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/files/{key}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Streams the file a signed URL names; 403 for a bad or expired signature, 410 once deleted. */
        get: operations["download"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/healthz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The process is up. */
        get: operations["healthz"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/i18n/elements": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The elements' words in a language: `locale` if errand ships it (or one
         *     near it: `fr-CA` is answered `fr`), else the browser's `Accept-Language`,
         *     else errand's default.
         */
        get: operations["elements"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/jobs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** `GET /jobs`: the caller's jobs, newest first, one page at a time. */
        get: operations["get_jobs"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/jobs/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** `GET /jobs/{id}`: the caller's job, or 404 for anything else (including ids that are not UUIDs). */
        get: operations["get_jobs_by_id"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/jobs/{id}/cancel": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * `POST /jobs/{id}/cancel`: stops one of the caller's jobs. A waiting job
         *     ends at once (`200`, `cancelled`); a running one is told to stop, in
         *     whichever process runs it (`202`, state `cancelling`, until its worker
         *     ended it); asking again gives the same answer. The owner gets no
         *     notification or email for it, only a `job_cancelled` event on their
         *     streams. A job that already completed or failed answers `409`.
         */
        post: operations["post_jobs_by_id_cancel"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/jobs/{id}/result": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * `GET /jobs/{id}/result`: for the job's owner, a 303 to a fresh signed URL
         *     of its file; 409 while the job has not completed; 410 once the file's
         *     retention ended; 404 for anyone else, as for a missing job.
         */
        get: operations["result"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/jobs/{job_type}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** `POST /jobs/{type}`: record the job (or find the one the key names) and answer at once. */
        post: operations["post_jobs_by_job_type"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/jobs/export_creator_earnings": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Start a creator earnings export */
        post: operations["create_export_creator_earnings"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/jobs/export_sales_report": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Start a sales report export */
        post: operations["create_export_sales_report"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/jobs/noop": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Start a test job */
        post: operations["create_noop"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/jobs/sleep": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Start a sleep job */
        post: operations["create_sleep"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/links/jobs/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Opens an email's link. */
        get: operations["open"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/me/notification-preferences": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** `GET /me/notification-preferences`: how each category stands for the caller. */
        get: operations["get_me_notification_preferences"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/me/notification-preferences/{category}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        /**
         * `PUT /me/notification-preferences/{category}`: changes some of the
         *     caller's channels for one category; those left out stay as they were.
         */
        put: operations["put_me_notification_preferences_by_category"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/me/notification-settings": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** `GET /me/notification-settings`: the caller's time zone and quiet hours. */
        get: operations["get_me_notification_settings"];
        /**
         * `PUT /me/notification-settings`: sets the caller's time zone and quiet
         *     hours (`quiet_hours` absent or null: none).
         */
        put: operations["put_me_notification_settings"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/me/push-subscriptions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** `GET /me/push-subscriptions`: the caller's devices, oldest first. */
        get: operations["get_me_push_subscriptions"];
        put?: never;
        /**
         * `POST /me/push-subscriptions`: subscribes a device (the same endpoint
         *     again renews its keys).
         */
        post: operations["subscribe"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/me/push-subscriptions/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** `DELETE /me/push-subscriptions/{id}`: unsubscribes one of the caller's devices. */
        delete: operations["unsubscribe"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/metrics": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Submissions, claims, attempt ends, rescues, emails, open streams, and the
         *     queue's depth across all processes (read from the database at each
         *     scrape; left out when the database does not answer). OpenMetrics (with
         *     exemplars naming traces) where `Accept` asks for it, as Prometheus does;
         *     else the Prometheus text format.
         */
        get: operations["metrics"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/notifications": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** `GET /notifications`: the caller's feed, newest first, with `unread_count` and `unseen_count`. */
        get: operations["get_notifications"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/notifications/{id}/archive": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * `POST /notifications/{id}/archive`: out of the feed and its counts (listed
         *     with `status=archived`); 204 again for one already archived, 404 whether
         *     missing or someone else's.
         */
        post: operations["archive"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/notifications/{id}/read": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** `POST /notifications/{id}/read`: 204, or 404 whether missing or someone else's. */
        post: operations["mark_read"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/notifications/archive-read": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** `POST /notifications/archive-read`: archives every read notification of the caller. */
        post: operations["archive_read"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/notifications/read-all": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** `POST /notifications/read-all`: marks every unread notification of the caller read. */
        post: operations["mark_all_read"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/notifications/seen": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * `POST /notifications/seen`: the caller opened the bell: every unseen
         *     notification is seen (the badge counts none), read or not.
         */
        post: operations["mark_all_seen"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/notifications/stream": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * `GET /notifications/stream`: Server-Sent Events, one `job_completed` event
         *     per new notification of the caller, with the notification id as event id,
         *     an `unread_count` event (no id) when the stream opens and whenever the
         *     caller's unread or unseen count changes, in this process or any other, and a
         *     `job_progress` event (no id; only the latest value) when a running job of
         *     the caller reports progress, or a `batch_progress` event when a running
         *     batch's counts change. A job the caller cancelled themselves comes as a
         *     `job_cancelled` event, one a newer request of theirs replaced as a
         *     `job_superseded` event (never in the feed); `batch_completed` and
         *     `webhook_disabled` notifications come as events of those names.
         *     With `Last-Event-ID`, first replays what came after it.
         */
        get: operations["stream"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/notifications/stream-tickets": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * `POST /notifications/stream-tickets`: a short-lived ticket for
         *     `GET /notifications/stream?ticket=…`, for browsers' EventSource, which
         *     cannot send an Authorization header. The ticket opens streams only.
         */
        post: operations["stream_ticket"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/readyz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The database answers and has every migration this build knows. */
        get: operations["readyz"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/schedules": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** `GET /schedules`: the caller's schedules, newest first. */
        get: operations["get_schedules"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/schedules/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** `GET /schedules/{id}`: the caller's schedule, or 404. */
        get: operations["get_schedules_by_id"];
        put?: never;
        post?: never;
        /** `DELETE /schedules/{id}`: the caller's schedule is gone (its jobs stay). */
        delete: operations["delete"];
        options?: never;
        head?: never;
        /**
         * `PATCH /schedules/{id}`: pause (`{"paused": true}`), resume, or change
         *     params, format, expression, zone, end or policies. A changed expression,
         *     zone or end counts from now; a resumed schedule's occurrences that fell
         *     while it was paused are skipped (its next run is its next occurrence
         *     after now), whatever its `missed` policy.
         */
        patch: operations["change"];
        trace?: never;
    };
    "/schedules/{job_type}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** `POST /schedules/{type}`: record a schedule (or find the one the key names). */
        post: operations["create"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/schedules/pause/{token}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Asks whether to pause: a page with a button that POSTs. */
        get: operations["get_schedules_pause_by_token"];
        put?: never;
        /** Pauses the schedule: it makes no jobs until resumed (`PATCH /schedules/{id}`). */
        post: operations["post_schedules_pause_by_token"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/tenant/branding": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * `GET /tenant/branding`: what the caller's tenant set (nulls: errand's
         *     own). Any of its users may read it: it is what their emails show, and
         *     the browser's elements take its colour.
         */
        get: operations["get_tenant_branding"];
        /**
         * `PUT /tenant/branding`: sets the tenant's branding whole (what is left
         *     out or blank: errand's own), audited; counts from the next email on.
         */
        put: operations["put_tenant_branding"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/tenant/erasures": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * `POST /tenant/erasures`: a tenant admin erases (or counts) what errand
         *     keeps of one user of their own tenant.
         */
        post: operations["erase_for_tenant_admin"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/tenant/notification-defaults": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** `GET /tenant/notification-defaults`: how each category stands for the admin's tenant's users who chose nothing. */
        get: operations["get_tenant_notification_defaults"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/tenant/notification-defaults/{category}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        /**
         * `PUT /tenant/notification-defaults/{category}`: sets some of the tenant's
         *     defaults for one category (audited); those left out stay as they were.
         */
        put: operations["put_tenant_notification_defaults_by_category"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/tenant/schedules": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** `GET /tenant/schedules?user=`: the admin's tenant's schedules, newest first (at most 500). */
        get: operations["list_for_tenant_admin"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/tenant/schedules/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** `DELETE /tenant/schedules/{id}`: deletes a schedule of the admin's tenant (audited; its jobs stay). */
        delete: operations["delete_for_tenant_admin"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/tenant/schedules/{id}/pause": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** `POST /tenant/schedules/{id}/pause`: pauses a schedule of the admin's tenant (audited). */
        post: operations["pause_for_tenant_admin"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/tenant/templates/preview": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** `GET /tenant/templates/preview?kind=`: an email as the admin's tenant's users get it, with sample content. */
        get: operations["preview_for_tenant_admin"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/unsubscribe/{token}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Asks whether to unsubscribe: a page with a button that POSTs. */
        get: operations["get_unsubscribe_by_token"];
        put?: never;
        /** Unsubscribes: the category's emails are off for the token's user from now on. */
        post: operations["post_unsubscribe_by_token"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/webhooks": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** `GET /webhooks`: the admin's tenant's endpoints, oldest first (no secrets). */
        get: operations["get_webhooks"];
        put?: never;
        /** `POST /webhooks`: registers an endpoint for the admin's tenant. */
        post: operations["register"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/webhooks/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** `DELETE /webhooks/{id}`: removes one of the tenant's endpoints. */
        delete: operations["remove"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/webhooks/{id}/deliveries": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** `GET /webhooks/{id}/deliveries`: the endpoint's delivery log, newest first. */
        get: operations["deliveries"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/webhooks/{id}/deliveries/{delivery}/redeliver": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * `POST /webhooks/{id}/deliveries/{delivery}/redeliver`: sends a delivered
         *     or failed delivery again, as a new series of attempts (the same
         *     `webhook-id`); one still pending or being sent is left as it is. A
         *     delivery is sent again at most once per `webhooks.redeliver_cooldown`:
         *     errand is not a tool for sending one request to an address in a loop.
         */
        post: operations["redeliver"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/webhooks/preferences": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** `GET /webhooks/preferences`: how each category's webhook channel stands for the admin's tenant. */
        get: operations["get_webhooks_preferences"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/webhooks/preferences/{category}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        /** `PUT /webhooks/preferences/{category}`: turns the tenant's webhook channel on or off for one category. */
        put: operations["put_webhooks_preferences_by_category"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/worker/v1/claim": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * `POST /worker/v1/claim`: up to `max` jobs of the worker's types, waiting
         *     up to `wait` seconds for one to arrive (answered as soon as one does).
         */
        post: operations["claim"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/worker/v1/jobs/{id}/checkpoint": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * `POST /worker/v1/jobs/{id}/checkpoint`: records how far the attempt has
         *     come, so that after a crash the run's next attempt (whichever worker
         *     claims it) is handed it and resumes there. Write it once what it says is
         *     durable, and not more often than every few seconds.
         */
        post: operations["checkpoint"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/worker/v1/jobs/{id}/complete": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * `POST /worker/v1/jobs/{id}/complete`: the job is done, with its result.
         *     Idempotent for the same lease.
         */
        post: operations["complete"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/worker/v1/jobs/{id}/fail": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * `POST /worker/v1/jobs/{id}/fail`: the attempt failed; it runs again after
         *     the type's backoff if `retryable` and attempts remain. Idempotent for the
         *     same lease.
         */
        post: operations["fail"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/worker/v1/jobs/{id}/heartbeat": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** `POST /worker/v1/jobs/{id}/heartbeat`: extends the lease. */
        post: operations["heartbeat"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/worker/v1/jobs/{id}/logs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * `POST /worker/v1/jobs/{id}/logs`: lines the attempt logged, for the
         *     operators' timeline of the job. Send them in batches (a few a second at
         *     most), the last ones before or just after the attempt's end (under the
         *     lease it ended with); an attempt keeps 1,000 lines or 256 KiB, then one
         *     line says its log was cut.
         */
        post: operations["logs"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/worker/v1/jobs/{id}/progress": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * `POST /worker/v1/jobs/{id}/progress`: how far the job has come (shown in
         *     `GET /jobs/{id}` and on the owner's streams). Each call is a write:
         *     report about once a second, as errand's own handlers are throttled to.
         */
        post: operations["progress"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/worker/v1/jobs/{id}/result": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        /**
         * `PUT /worker/v1/jobs/{id}/result?lease_id=&file_name=`: the attempt's
         *     output file, streamed into errand's storage (constant memory) with the
         *     request's `Content-Type`. When the attempt completes, the file is the
         *     job's result: its owner downloads it through a fresh signed URL, and it is
         *     deleted after the result retention, as an export's is.
         */
        put: operations["upload"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/worker/v1/jobs/{id}/result-url": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * `POST /worker/v1/jobs/{id}/result-url`: with the S3 backend, a presigned
         *     URL to PUT the attempt's output file straight into the bucket (nothing
         *     passes through errand). `/complete` then checks that the object is there
         *     and makes it the job's result. The local backend answers 400: upload
         *     through `PUT /worker/v1/jobs/{id}/result` instead.
         */
        post: operations["upload_url"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        /** @description A page of the audit trail. */
        ActionList: {
            /** @description `{id, at, operator, action, job_id, filter, affected}` each. */
            actions: Record<string, unknown>[];
            /** @description Pass as `cursor` for the next page; absent on the last. */
            next_cursor?: string | null;
        };
        /** @description A page of any tenant's jobs. */
        AdminJobList: {
            jobs: components["schemas"]["AdminJobView"][];
            next_cursor?: string | null;
            /**
             * @description With a `param` filter: the job types whose params it did not search
             *     (sealed at rest, or kept from this operator); their jobs never match it.
             */
            params_not_searched?: string[];
        };
        /** @description A job as an operator sees it: whose it is, and (alone) its attempts' errors. */
        AdminJobView: components["schemas"]["JobView"] & {
            /**
             * @description The backend service that asked for the job for its owner (a service
             *     token acting for them), where one did (`GET /admin/jobs/{id}`).
             */
            acted_by?: string | null;
            /** @description Why each failed attempt failed, oldest first (`GET /admin/jobs/{id}` only). */
            attempt_errors?: Record<string, unknown>[] | null;
            /**
             * @description The operator holding it, while held (`GET /admin/jobs/{id}` and the
             *     answers of its actions).
             */
            held_by?: string | null;
            /**
             * @description What became of the job (`GET /admin/jobs/{id}` only): `attempts`,
             *     `notifications`, `emails`, `pushes`, `webhooks` and `actions`.
             */
            history?: Record<string, unknown> | null;
            /**
             * @description What the job's type keeps from operators without the
             *     `operator:sensitive` scope (`params`: shown as `{}`; `result`: `null`,
             *     no download), when anything.
             */
            redacted?: string[];
            tenant: string;
            user: string;
        };
        /** @description How many notifications `archive-read` archived. */
        Archived: {
            /** Format: int64 */
            archived: number;
        };
        /** @description A batch as the API shows it. */
        BatchView: {
            /** Format: int32 */
            cancelled: number;
            /** Format: int32 */
            completed: number;
            created_at: string;
            /** Format: int32 */
            failed: number;
            finished_at?: string | null;
            /** Format: uuid */
            id: string;
            /** @description Where the children that did not complete are listed (CSV), once there are any. */
            report_url?: string | null;
            /**
             * @description `processing` until every child ended; then `completed`, or
             *     `completed_with_failures` when some failed or were cancelled.
             */
            status: string;
            /** Format: int32 */
            total: number;
            type: string;
        };
        /**
         * @description Which jobs a bulk action takes (at least a tenant, a type or
         *     `created_after`), and how.
         */
        BulkRequest: {
            /**
             * Format: uuid
             * @description Start after this job (the previous step's `next_after`).
             */
            after?: string | null;
            /** Format: date-time */
            created_after?: string | null;
            /** Format: date-time */
            created_before?: string | null;
            /** @description Count the jobs it would take, and change nothing (no audit row either). */
            dry_run?: boolean;
            /** @description Jobs whose error message holds this text (any case). */
            error?: string | null;
            /**
             * Format: int32
             * @description Take at most this many (1 to 1,000), in one step: the answer's
             *     `next_after` says where the next step starts. Without it, all.
             */
            limit?: number | null;
            /** @description `path=value`: jobs whose params hold `value` (as text) at the dot-separated `path`. */
            param?: string | null;
            tenant?: string | null;
            type?: string | null;
            user?: string | null;
        };
        /**
         * @description How many jobs a bulk cancel cancelled or asked to stop (or, as a dry
         *     run, would now).
         */
        Cancelled: {
            /** Format: int64 */
            cancelled?: number | null;
            /**
             * Format: uuid
             * @description With `limit`: where the next step starts; `null` when none is left.
             */
            next_after?: string | null;
            /** Format: int64 */
            would_cancel?: number | null;
        };
        /**
         * @description A category's channels as they stand for the caller (or, at
         *     `/tenant/notification-defaults`, for the tenant's users who chose nothing).
         */
        CategoryView: {
            category: string;
            /**
             * @description `in_app` (the feed and live streams), `email` and, where errand offers Web Push, `push`
             *     (the devices the caller subscribed): whether a job's end reaches the caller there,
             *     `true` or `false`; `email` may also be `"digest"` (in the caller's digest email).
             */
            channels: Record<string, unknown>;
            /** @description No one can turn it off (configured). */
            required: boolean;
            /**
             * @description Whose word each channel's setting is: `required`, `user` (the caller's
             *     choice), `tenant` (the tenant's default) or `config`.
             */
            sources: Record<string, unknown>;
        };
        CheckpointBody: {
            /**
             * @description How far the attempt has come, in any JSON the worker reads back
             *     (`checkpoint` in the claim of the run's next attempt); `null` forgets it.
             */
            checkpoint: unknown;
            /**
             * Format: int64
             * @description Its progress then (what the job's view shows a next attempt resumed from).
             */
            done?: number;
            /** Format: uuid */
            lease_id: string;
        };
        ClaimBody: {
            /**
             * Format: int32
             * @description 1 to 100, default 1.
             */
            max?: number | null;
            /** @description Job types to take (default: all the token allows). */
            types?: string[] | null;
            /**
             * Format: int64
             * @description Seconds to wait for work, 0 to 60, default 30.
             */
            wait?: number | null;
        };
        Claimed: {
            jobs: components["schemas"]["LeasedJob"][];
        };
        CompleteBody: {
            /** Format: uuid */
            lease_id: string;
            /** @description The job's result, shown to its owner. */
            result?: Record<string, unknown> | null;
        };
        /** @description A new endpoint, with the secret that signs its deliveries: shown only now. */
        CreatedEndpoint: components["schemas"]["EndpointView"] & {
            /** @description `whsec_` and the base64 of the 32-byte key (Standard Webhooks). */
            secret: string;
        };
        /** @description Every category the configured job types use, as it stands by default. */
        DefaultsView: {
            categories: components["schemas"]["CategoryView"][];
        };
        /** @description A page of an endpoint's deliveries, newest first. */
        DeliveryPage: {
            deliveries: components["schemas"]["DeliveryView"][];
            /** @description Pass as `cursor` for the next page; absent on the last. */
            next_cursor?: string | null;
        };
        /** @description A delivery as the endpoint's log shows it. */
        DeliveryView: {
            /** Format: int32 */
            attempts: number;
            created_at: string;
            delivered_at?: string | null;
            event: string;
            /**
             * Format: uuid
             * @description Also its `webhook-id`.
             */
            id: string;
            /**
             * Format: uuid
             * @description The job whose end it tells (absent: another event, e.g. `type.paused`).
             */
            job_id?: string | null;
            last_error?: string | null;
            /** Format: int32 */
            last_latency_ms?: number | null;
            /**
             * Format: int32
             * @description The endpoint's status at the last attempt (absent: no answer).
             */
            last_status?: number | null;
            /** @description When a pending delivery is tried next. */
            next_attempt_at?: string | null;
            /** @description `pending`, `sending`, `delivered` or `failed`. */
            state: string;
        };
        /** @description When the digest goes, as the API writes it. */
        DigestView: {
            /** @description For `day`: the local time `HH:MM`, e.g. `08:00`. */
            at?: string | null;
            /** @description `hour` (at the start of every local hour) or `day`. */
            every: string;
        };
        /** @description An element's words, each variable written `{name}`. */
        ElementWords: {
            /**
             * @description The language they are in: the one asked for, the nearest errand
             *     ships, else its default.
             */
            locale: string;
            /** @description By message id (`ui-…`). */
            messages: {
                [key: string]: string;
            };
        };
        /** @description Where a job is after an end was recorded. */
        Ended: {
            /** @description `completed`, `failed`, `cancelled` or `retry_scheduled`. */
            status: string;
        };
        /** @description The tenant's endpoints. */
        EndpointList: {
            webhooks: components["schemas"]["EndpointView"][];
        };
        /** @description An endpoint as its tenant's admins see it. */
        EndpointView: {
            created_at: string;
            /** @description The admin who registered it. */
            created_by: string;
            disabled_reason?: string | null;
            /** @description `false` once deliveries kept failing (see `disabled_reason`). */
            enabled: boolean;
            events: string[];
            /** Format: uuid */
            id: string;
            url: string;
        };
        /** @description What an erasure found (a dry run: what it would erase), and what is left after it. */
        ErasureReport: {
            dry_run: boolean;
            found: components["schemas"]["Inventory"];
            left?: null | components["schemas"]["Inventory"];
        };
        FailBody: {
            /** @description Why, written for the person who asked for the job. */
            error: string;
            /** Format: uuid */
            lease_id: string;
            /** @description Whether another attempt may succeed (within the type's attempts and backoff). */
            retryable: boolean;
        };
        /** @description A page of the caller's feed. */
        FeedPage: {
            /** @description Pass as `cursor` for the next page; absent on the last. */
            next_cursor?: string | null;
            notifications: components["schemas"]["NotificationView"][];
            /**
             * Format: int64
             * @description Unread notifications, archived ones aside.
             */
            unread_count: number;
            /**
             * Format: int64
             * @description Unseen ones (the bell was not opened since they came), archived ones aside: the bell's badge.
             */
            unseen_count: number;
        };
        /** @description What the health routes answer. */
        Health: {
            /** @description `ok` (healthz) or `ready` (readyz). */
            status: string;
        };
        Heartbeat: {
            /** Format: uuid */
            lease_id: string;
        };
        /** @description What errand keeps of a scope, by kind. */
        Inventory: {
            /** Format: int64 */
            attempt_logs: number;
            /** Format: int64 */
            batches: number;
            /**
             * Format: int64
             * @description Completion emails, sent or waiting in the outbox.
             */
            emails: number;
            /**
             * Format: int64
             * @description Result files still kept in storage.
             */
            files: number;
            /**
             * Format: int64
             * @description The idempotency keys among them all (a job's, a batch's, a schedule's each).
             */
            idempotency_keys: number;
            /**
             * Format: int64
             * @description Jobs, finished or not, with their params, results and idempotency keys.
             */
            jobs: number;
            /** Format: int64 */
            notifications: number;
            /**
             * Format: int64
             * @description Notification preferences, one per category chosen, and the time zone and quiet hours if set.
             */
            preferences: number;
            /**
             * Format: int64
             * @description Web Push messages, sent or waiting.
             */
            push_messages: number;
            /**
             * Format: int64
             * @description Devices subscribed to Web Push.
             */
            push_subscriptions: number;
            /** Format: int64 */
            schedules: number;
            /**
             * Format: int64
             * @description When they last signed in, with their email (`people`).
             */
            sign_ins: number;
            /** Format: int64 */
            stream_tickets: number;
            /**
             * Format: int64
             * @description Jobs waiting or running (their attempts are fenced out).
             */
            unfinished_jobs: number;
            /** Format: int64 */
            webhook_deliveries: number;
            /**
             * Format: int64
             * @description Webhook endpoints: a user's registered ones (kept for the tenant,
             *     their author forgotten), or all of a tenant's (deleted).
             */
            webhook_endpoints: number;
        };
        /** @description A page of the caller's jobs, newest first. */
        JobList: {
            jobs: components["schemas"]["JobView"][];
            next_cursor?: string | null;
        };
        /** @description A job as the API shows it. */
        JobView: {
            /** Format: int32 */
            attempts: number;
            /** @description When the job reached `completed`, `failed` or `cancelled`. */
            completed_at?: string | null;
            created_at: string;
            error_message?: string | null;
            /**
             * @description An export's file format (absent for a job of another kind).
             * @example xlsx
             */
            format?: string | null;
            /** Format: uuid */
            id: string;
            /** Format: int32 */
            max_attempts: number;
            /** @description When a job waiting to retry runs next. */
            next_attempt_at?: string | null;
            params: Record<string, unknown>;
            /** @description Why a `paused` job waits, in words its owner may read. */
            paused_reason?: string | null;
            /**
             * Format: int32
             * @description Where it stands among its tenant's jobs: interactive 0, scheduled
             *     -10, bulk -20, each moved by its type's and (interactive) the
             *     request's, -4 to 4. Higher runs first, within the tenant's share.
             */
            priority: number;
            /**
             * @description While it runs, what its handler last reported (throttled to about once
             *     a second): `{done, total, message, updated_at}`.
             */
            progress?: Record<string, unknown> | null;
            /**
             * @description What the job produced: for a file (exports, uploads) its key, size,
             *     rows, type, name and expiry; an external worker's fields beside them.
             */
            result?: Record<string, unknown> | null;
            /** @description A fresh signed download URL, while the result exists. */
            result_url?: string | null;
            /**
             * Format: int64
             * @description Where the running (or last) attempt resumed from, in its progress's
             *     units (an export's rows): an earlier attempt's checkpoint. Absent for
             *     an attempt that began at the start.
             */
            resumed_from?: number | null;
            /**
             * Format: uuid
             * @description The schedule that made it (absent for a job made otherwise).
             */
            schedule_id?: string | null;
            /** @description The schedule's occurrence it was made for (with `schedule_id`). */
            scheduled_for?: string | null;
            /**
             * @description Finer than `status`: `queued`, `running`, `cancelling` (asked to stop),
             *     `retry_scheduled`, `paused` (waiting while the service's operators
             *     hold it back: see `paused_reason`), `completed`, `failed`, `cancelled`.
             */
            state: string;
            /** @description `pending`, `processing`, `completed`, `failed` or `cancelled`. */
            status: string;
            type: string;
        };
        /** @description A job leased to an external worker. */
        LeasedJob: {
            /** Format: int32 */
            attempt: number;
            /**
             * @description What an earlier attempt of this run recorded with `/checkpoint`:
             *     go on from there (absent: start from the beginning).
             */
            checkpoint?: unknown;
            /** Format: uuid */
            id: string;
            lease_expires_at: string;
            /**
             * Format: uuid
             * @description Name it in every call about this job.
             */
            lease_id: string;
            params: Record<string, unknown>;
            tenant: string;
            /**
             * @description A later attempt's: the same request's `traceparent`, to *link* the
             *     span that runs it to (a retry starts a trace of its own).
             */
            trace_link?: string | null;
            /**
             * @description A first attempt's trace: the W3C `traceparent` of the request that
             *     recorded the job. Make the span that runs it a child of this one, and
             *     send it as the `traceparent` header of this job's calls.
             */
            traceparent?: string | null;
            type: string;
            user: string;
        };
        LeaseRenewed: {
            /**
             * @description The job's owner or an operator asked for it to stop: stop, then call
             *     `/fail` (it ends `cancelled`).
             */
            cancel_requested: boolean;
            lease_expires_at: string;
        };
        LogLineBody: {
            /** @description When it was logged (RFC 3339); left out: when errand received it. */
            at?: string | null;
            /** @description Structured details, a JSON object. */
            fields?: Record<string, unknown> | null;
            /** @description `debug`, `info`, `warn` or `error`. */
            level: string;
            /** @description Up to 4,096 characters (longer ones are cut), without NUL. */
            message: string;
        };
        LogsBody: {
            /** Format: uuid */
            lease_id: string;
            /** @description 1 to 100 lines, oldest first. */
            lines: components["schemas"]["LogLineBody"][];
        };
        /** @description A schedule and whose it is. */
        ManagedScheduleView: components["schemas"]["ScheduleView"] & {
            tenant: string;
            user: string;
        };
        /** @description How many notifications `read-all` marked. */
        MarkedRead: {
            /** Format: int64 */
            marked_read: number;
        };
        /** @description How many notifications `seen` marked. */
        MarkedSeen: {
            /** Format: int64 */
            marked_seen: number;
        };
        /** @description `POST /schedules/{type}`'s body. */
        NewScheduleRequest: {
            /**
             * Format: int32
             * @description 1 to 100, default 1.
             */
            catch_up_limit?: number | null;
            /** @description Five fields (minute hour day-of-month month day-of-week) or a shorthand (`@daily`, `@weekly`, …). */
            cron: string;
            /**
             * Format: date-time
             * @description No occurrence after this.
             */
            ends_at?: string | null;
            /**
             * @description An export's file format for its jobs, one its type offers (its first when absent).
             * @example xlsx
             */
            format?: string | null;
            /**
             * @description Occurrences missed while errand was down or the schedule paused:
             *     `skip` (default) or `catch_up` (the latest `catch_up_limit` of them run).
             */
            missed?: string | null;
            /**
             * @description When an occurrence comes while the job of the one before is
             *     unfinished: `skip` (default), `queue` or `cancel_previous`.
             */
            overlap?: string | null;
            /**
             * @description The jobs' params, checked against the type's schema. A value may be a
             *     date that moves with each occurrence: `{"$date": "start_of_previous_week"}`
             *     (see docs/schedules.md, "Dates that move").
             */
            params: Record<string, unknown>;
            /** @description An IANA time zone (`Europe/Paris`): the expression is read on its wall clock. */
            timezone: string;
        };
        /** @description A notification as the API shows it, written for a person. */
        NotificationView: {
            /** @description When the caller archived it: out of the feed and its counts. */
            archived_at?: string | null;
            /**
             * Format: uuid
             * @description The batch (`batch_completed`).
             */
            batch_id?: string | null;
            body: string;
            /** @description How the batch's children ended (`batch_completed`). */
            counts?: Record<string, unknown> | null;
            created_at: string;
            /** Format: uuid */
            id: string;
            /**
             * Format: uuid
             * @description The job (`job_completed`, `job_cancelled`, `job_superseded`).
             */
            job_id?: string | null;
            /** @description `completed`, `failed` or `cancelled` (`job_completed`, `job_cancelled`, `job_superseded`). */
            job_status?: string | null;
            /** @description The job's, or the batch's children's, type. */
            job_type?: string | null;
            /**
             * @description `job_completed`, `batch_completed` (the last job of a batch ended),
             *     `webhook_disabled` (to a tenant's admins) or `schedule_paused` (errand
             *     paused the user's schedule: they had not signed in for long) in the
             *     feed; on streams also
             *     `job_cancelled`, when the user cancelled the job themselves, and
             *     `job_superseded`, when a newer request of theirs with the job's
             *     admission key replaced it (never in the feed).
             */
            kind: string;
            read_at?: string | null;
            /**
             * Format: uuid
             * @description The schedule that made the job, when one did (`PATCH /schedules/{id}`
             *     with `{"paused": true}` pauses it), or the schedule paused (`schedule_paused`).
             */
            schedule_id?: string | null;
            /** @description When the caller opened the bell while it was in the feed (read implies seen). */
            seen_at?: string | null;
            title: string;
            /**
             * Format: uuid
             * @description The endpoint that was disabled (`webhook_disabled`).
             */
            webhook_id?: string | null;
        };
        /** @description The overview, and this process's own view of the database. */
        OverviewView: Record<string, unknown> & {
            /** @description Whether this process hears the database's announcements (LISTEN). */
            listening: boolean;
        };
        /** @description Every category the configured job types use. */
        PreferencesView: {
            categories: components["schemas"]["CategoryView"][];
        };
        /** @description An RFC 9457 problem document, with errand's `code` (and `field` for params) as extensions. */
        Problem: {
            /** @description Stable and machine-readable, e.g. `invalid_params`, `key_reused`, `unavailable`. */
            code: string;
            /**
             * Format: int64
             * @description For `quota_exceeded`: the unfinished jobs that count against it now.
             */
            count?: number | null;
            detail: string;
            /** @description For `invalid_params`: a JSON pointer to the failing field. */
            field?: string | null;
            /**
             * Format: uuid
             * @description For `admission_conflict`: the unfinished job that holds the key.
             */
            job_id?: string | null;
            /**
             * Format: int32
             * @description For `quota_exceeded`: the cap.
             */
            limit?: number | null;
            /** @description For `quota_exceeded`: which cap (`user_job_type`, `user` or `tenant`). */
            scope?: string | null;
            /** Format: int32 */
            status: number;
            title: string;
            type: string;
        };
        ProgressBody: {
            /** Format: int64 */
            done: number;
            /** Format: uuid */
            lease_id: string;
            message?: string | null;
            /** Format: int64 */
            total?: number | null;
        };
        /** @description Unfinished jobs per type and state. */
        Queues: {
            /**
             * @description The tenants and the users with the most unfinished jobs against their
             *     caps (`limit`; `null`: none), nearest first: `{tenants, users}`.
             */
            nearest_quotas: Record<string, unknown>;
            queues: Record<string, unknown>[];
        };
        /** @description Quiet hours as the API writes them: local times `HH:MM`. */
        QuietHoursView: {
            /** @description When it ends, e.g. `08:00` (the next day when earlier than `start`). */
            end: string;
            /** @description When quiet begins, e.g. `21:00`. */
            start: string;
        };
        /**
         * @description How many jobs a bulk retry put back in the queue (or, as a dry run,
         *     would put back now).
         */
        Retried: {
            /**
             * Format: uuid
             * @description With `limit`: where the next step starts; `null` when none is left.
             */
            next_after?: string | null;
            /** Format: int64 */
            retried?: number | null;
            /** Format: int64 */
            would_retry?: number | null;
        };
        /** @description `PATCH /schedules/{id}`'s body: what to change (a field left out stays). */
        ScheduleChange: {
            /** Format: int32 */
            catch_up_limit?: number | null;
            cron?: string | null;
            /**
             * Format: date-time
             * @description `null` removes the end.
             */
            ends_at?: string | null;
            format?: string | null;
            missed?: string | null;
            overlap?: string | null;
            params?: Record<string, unknown> | null;
            paused?: boolean | null;
            timezone?: string | null;
        };
        /** @description A page of the caller's schedules. */
        ScheduleList: {
            next_cursor?: string | null;
            schedules: components["schemas"]["ScheduleView"][];
        };
        /** @description A schedule as the API shows it. */
        ScheduleView: {
            /** Format: int32 */
            catch_up_limit: number;
            created_at: string;
            cron: string;
            ends_at?: string | null;
            /**
             * @description An export's file format for its jobs (absent for a type that writes no file).
             * @example xlsx
             */
            format?: string | null;
            /** Format: uuid */
            id: string;
            /**
             * Format: uuid
             * @description The job its latest occurrence made.
             */
            last_job_id?: string | null;
            /** @description `skip` or `catch_up` (with `catch_up_limit`). */
            missed: string;
            /** @description When it fires next (`null`: never again); while paused, when it would have. */
            next_run_at?: string | null;
            /** @description `skip`, `queue` or `cancel_previous`. */
            overlap: string;
            /** @description As written: `{"$date": …}` expressions are kept (each job gets them resolved). */
            params: Record<string, unknown>;
            paused: boolean;
            /**
             * @description Who paused it, while it is paused: `owner`, `administrator` (a
             *     tenant admin or an operator), or `owner_inactive` (errand: its owner
             *     had not signed in for `schedules.owner_inactive_after`).
             */
            paused_by?: string | null;
            timezone: string;
            type: string;
            updated_at: string;
        };
        /** @description The caller's settings. */
        SettingsView: {
            digest?: null | components["schemas"]["DigestView"];
            quiet_hours?: null | components["schemas"]["QuietHoursView"];
            /**
             * @description IANA, e.g. `Europe/Paris`: as set, else the token's `zoneinfo` claim
             *     (absent until either). A `PUT` without one takes the claim's.
             */
            timezone?: string | null;
        };
        /** @description A ticket for `GET /notifications/stream?ticket=…`. */
        StreamTicket: {
            /**
             * Format: int64
             * @description Seconds until it expires.
             */
            expires_in: number;
            ticket: string;
        };
        /** @description The caller's devices, and the key to subscribe another with. */
        SubscriptionList: {
            subscriptions: components["schemas"]["SubscriptionView"][];
            /** @description errand's VAPID public key (base64url): `applicationServerKey` for `pushManager.subscribe`. */
            vapid_public_key: string;
        };
        /** @description A subscribed device (never its keys). */
        SubscriptionView: {
            created_at: string;
            endpoint: string;
            /** Format: uuid */
            id: string;
            /** @description The browser that subscribed, as its `User-Agent` said. */
            user_agent?: string | null;
        };
        /** @description Where to PUT the file, until when. */
        UploadUrl: {
            expires_at: string;
            /** @description `PUT`. */
            method: string;
            url: string;
        };
        UploadUrlBody: {
            /** @description The file's media type (default `application/octet-stream`). */
            content_type?: string | null;
            /** @description What a download is saved as. */
            file_name: string;
            /** Format: uuid */
            lease_id: string;
        };
        /** @description A category's webhook channel as it stands for the tenant. */
        WebhookCategoryView: {
            category: string;
            /** @description No one can turn it off (configured). */
            required: boolean;
            /** @description Whether the tenant's endpoints hear of the ends of this category's jobs. */
            webhook: boolean;
        };
        /** @description Every category the configured job types use. */
        WebhookPreferencesView: {
            categories: components["schemas"]["WebhookCategoryView"][];
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    get_admin_actions: {
        parameters: {
            query?: {
                /** @description retry, cancel, bulk_retry, bulk_cancel, set_quotas, pause, resume, hold, release, erase, schedule_pause, schedule_delete, set_retention, notification_defaults or set_branding */
                action?: string;
                /** @description `next_cursor` of the previous page */
                cursor?: string;
                /** @description Only actions on this job */
                job?: string;
                /** @description 1 to 100, default 20 */
                limit?: number;
                /** @description Only this operator's (the token's `sub`) */
                operator?: string;
                /** @description Taken at or after (RFC 3339) */
                since?: string;
                /** @description Taken before (RFC 3339) */
                until?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of actions */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ActionList"];
                };
            };
            /** @description A bad filter, limit or cursor (`bad_request`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not an operator token (`forbidden`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    erase_for_operator: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description `tenant`; `user` (left out: every user of the tenant, and the tenant's own endpoints, quotas and pauses); `dry_run` (default false: erase) */
        requestBody: {
            content: {
                "application/json": Record<string, unknown>;
            };
        };
        responses: {
            /** @description What was found (and, after a real run, what is left) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErasureReport"];
                };
            };
            /** @description A body that is not such an object (`bad_request`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not an operator token, or a read-only one (`forbidden`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    get_admin_jobs: {
        parameters: {
            query?: {
                /** @description Created at or after (RFC 3339) */
                created_after?: string;
                /** @description Created before (RFC 3339) */
                created_before?: string;
                /** @description `next_cursor` of the previous page */
                cursor?: string;
                /** @description Only jobs whose error message holds this text (any case) */
                error?: string;
                /** @description 1 to 100, default 20 */
                limit?: number;
                /** @description `path=value`: only jobs whose params hold `value` (as text) at the dot-separated `path`, e.g. `customer.id=42` */
                param?: string;
                /** @description pending, processing, completed, failed or cancelled */
                status?: string;
                /** @description Only this tenant's jobs */
                tenant?: string;
                /** @description A job type's name */
                type?: string;
                /** @description Only this user's jobs */
                user?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of jobs */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AdminJobList"];
                };
            };
            /** @description A bad filter, limit or cursor (`bad_request`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not an operator token (`forbidden`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    get_admin_jobs_by_id: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The job's id */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The job */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AdminJobView"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not an operator token (`forbidden`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No such job (`not_found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    post_admin_jobs_by_id_cancel: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The job's id */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The job, cancelled */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AdminJobView"];
                };
            };
            /** @description The job, being stopped (state `cancelling`) */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AdminJobView"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not an operator token, or a read-only one (`forbidden`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No such job (`not_found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Already completed or failed (`job_already_ended`) */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    hold: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The job's id */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The job, held (holding a held job again changes nothing) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AdminJobView"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not an operator token, or a read-only one (`forbidden`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No such job (`not_found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Running or ended (`job_not_waiting`) */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    release: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The job's id */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The job, released (or never held) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AdminJobView"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not an operator token, or a read-only one (`forbidden`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No such job (`not_found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    retry: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The job's id */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The job, queued again */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AdminJobView"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not an operator token, or a read-only one (`forbidden`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No such job (`not_found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Neither failed nor cancelled (`job_not_retryable`) */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    cancel_matching: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["BulkRequest"];
            };
        };
        responses: {
            /** @description How many were cancelled or asked to stop (`cancelled`, and `next_after` with `limit`), or as a dry run would be now (`would_cancel`) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Cancelled"];
                };
            };
            /** @description No filter, or a bad one (`bad_request`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not an operator token, or a read-only one (`forbidden`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    retry_matching: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["BulkRequest"];
            };
        };
        responses: {
            /** @description How many were retried (`retried`, and `next_after` with `limit`), or as a dry run would be now (`would_retry`) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Retried"];
                };
            };
            /** @description No filter, or a bad one (`bad_request`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not an operator token, or a read-only one (`forbidden`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    read: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description How the queue stands */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["OverviewView"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not an operator token (`forbidden`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    get_admin_pauses: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description `pauses`: each `{id, tenant, type, reason, until, paused_by, paused_at, state, resumed_at, ramp_seconds, ramp_ends_at}` (`tenant` or `type` `null`: every one; `until` `null`: until resumed; `state` `holding`, or `ramping` once it ended, until `ramp_ends_at`) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": Record<string, unknown>;
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not an operator token (`forbidden`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    pause: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description `type` (a job type), `tenant` (a tenant's id), at least one of them; `reason` (1 to 500 characters); `until` (RFC 3339, optional: until resumed); `ramp` (how long the scope ramps once the pause ends, e.g. `"5m"`, at most a day; optional: 2 minutes) */
        requestBody: {
            content: {
                "application/json": Record<string, unknown>;
            };
        };
        responses: {
            /** @description The scope was paused already: its pause, with the new reason and end */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": Record<string, unknown>;
                };
            };
            /** @description The scope is paused: the pause */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": Record<string, unknown>;
                };
            };
            /** @description No scope, an unknown type, an empty reason, an `until` that has passed, or a `ramp` that is not a duration of at most a day (`bad_request`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not an operator token, or a read-only one (`forbidden`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    resume: {
        parameters: {
            query?: {
                /** @description How long the scope ramps, e.g. `5m` (`0s`: not at all, at most a day); left out: the pause's own */
                ramp?: string;
            };
            header?: never;
            path: {
                /** @description A pause's id */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Resumed: the pause, `state` `ramping` (a pause that was ramping: as it was, its ramp now ended) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": Record<string, unknown>;
                };
            };
            /** @description A `ramp` that is not a duration of at most a day (`bad_request`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not an operator token, or a read-only one (`forbidden`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No such pause (`not_found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    queues: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Counts per type and state */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Queues"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not an operator token (`forbidden`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    list_for_operator: {
        parameters: {
            query?: {
                /** @description Only this tenant's */
                tenant?: string;
                /** @description Only this user's */
                user?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description `schedules`: each a schedule with its `tenant` and `user` */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": Record<string, unknown>;
                };
            };
            /** @description A tenant or user that is not an id (`bad_request`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not an operator token (`forbidden`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    delete_for_operator: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The schedule's id */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not an operator token, or a read-only one (`forbidden`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No such schedule (`not_found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    pause_for_operator: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The schedule's id */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The schedule, paused */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ManagedScheduleView"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not an operator token, or a read-only one (`forbidden`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No such schedule (`not_found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    preview_for_operator: {
        parameters: {
            query: {
                /** @description job_completed, job_failed, batch_completed or digest */
                kind: string;
                /** @description A shipped locale (`en`, `fr`); errand's default when absent */
                locale?: string;
                /** @description Whose branding */
                tenant: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description `{from, subject, text, html}`, rendered in the tenant's branding */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": Record<string, unknown>;
                };
            };
            /** @description No or an invalid tenant, or an unknown kind or locale (`bad_request`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not an operator token (`forbidden`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description errand sends no email here (`email_not_enabled`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    get_admin_tenants_by_tenant_quotas: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description A tenant's id */
                tenant: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The tenant's quotas: `override`, `caps` (`null`: no cap) and `unfinished` */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": Record<string, unknown>;
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not an operator token (`forbidden`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    put_admin_tenants_by_tenant_quotas: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description A tenant's id */
                tenant: string;
            };
            cookie?: never;
        };
        /** @description `max_unfinished_per_user` and `max_unfinished_per_tenant`: whole numbers (0 refuses every new job), or `null` for the configured cap */
        requestBody: {
            content: {
                "application/json": Record<string, unknown>;
            };
        };
        responses: {
            /** @description The tenant's quotas as they now hold */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": Record<string, unknown>;
                };
            };
            /** @description A body that is not such an object (`bad_request`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not an operator token, or a read-only one (`forbidden`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    get_admin_tenants_by_tenant_retention: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description A tenant's id */
                tenant: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description For all its types, `retention_seconds` (how long its finished jobs are kept) and `result_retention_seconds` (its result files), each `null` where not set; and `types`: the same per job type that has its own */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": Record<string, unknown>;
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not an operator token (`forbidden`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    put_admin_tenants_by_tenant_retention: {
        parameters: {
            query?: {
                /** @description One of the tenant's job types; absent: all of them */
                type?: string;
            };
            header?: never;
            path: {
                /** @description A tenant's id */
                tenant: string;
            };
            cookie?: never;
        };
        /** @description `retention` (finished jobs) and `result_retention` (result files): durations such as `"30d"` (at most ten years), or `null`. A result retention shorter than a file's expiry brings it forward */
        requestBody: {
            content: {
                "application/json": Record<string, unknown>;
            };
        };
        responses: {
            /** @description The level's retentions as they now hold: `retention_seconds`, `result_retention_seconds` */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": Record<string, unknown>;
                };
            };
            /** @description Not such a body, not such a duration, or no such job type (`bad_request`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not an operator token, or a read-only one (`forbidden`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    get_batches_by_id: {
        parameters: {
            query?: never;
            header?: {
                /** @description With a service token (scope `service`): the tenant's user it acts for, `tenant/user`, each part percent-encoded where it holds `/`, `%` or anything but visible ASCII */
                "Errand-On-Behalf-Of"?: string;
            };
            path: {
                /** @description The batch's id */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The caller's batch */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["BatchView"];
                };
            };
            /** @description A malformed request: here, perhaps, an `Errand-On-Behalf-Of` that is not `tenant/user` (`bad_request`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `Errand-On-Behalf-Of` with a token that is not a service's, or a tenant or job type the service token does not list (`forbidden`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No such batch of the caller's (`not_found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Past a rate limit (`rate_limited`): every answer of a user route carries `RateLimit-Policy` (`"user";q=100;w=10`: a burst over its window) and `RateLimit` (`"user";r=98;t=1`) of the IETF httpapi draft */
            429: {
                headers: {
                    /** @description Its standing: remaining `r`, seconds `t` until it is whole again */
                    RateLimit?: string;
                    /** @description The budget nearest its end: name, quota `q` per window `w` seconds */
                    "RateLimit-Policy"?: string;
                    /** @description Seconds until a request passes again */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    post_batches_by_id_cancel: {
        parameters: {
            query?: never;
            header?: {
                /** @description With a service token (scope `service`): the tenant's user it acts for, `tenant/user`, each part percent-encoded where it holds `/`, `%` or anything but visible ASCII */
                "Errand-On-Behalf-Of"?: string;
            };
            path: {
                /** @description The batch's id */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The batch after the cancel */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["BatchView"];
                };
            };
            /** @description A malformed request: here, perhaps, an `Errand-On-Behalf-Of` that is not `tenant/user` (`bad_request`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `Errand-On-Behalf-Of` with a token that is not a service's, or a tenant or job type the service token does not list (`forbidden`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No such batch of the caller's (`not_found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Past a rate limit (`rate_limited`): every answer of a user route carries `RateLimit-Policy` (`"user";q=100;w=10`: a burst over its window) and `RateLimit` (`"user";r=98;t=1`) of the IETF httpapi draft */
            429: {
                headers: {
                    /** @description Its standing: remaining `r`, seconds `t` until it is whole again */
                    RateLimit?: string;
                    /** @description The budget nearest its end: name, quota `q` per window `w` seconds */
                    "RateLimit-Policy"?: string;
                    /** @description Seconds until a request passes again */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    report: {
        parameters: {
            query?: never;
            header?: {
                /** @description With a service token (scope `service`): the tenant's user it acts for, `tenant/user`, each part percent-encoded where it holds `/`, `%` or anything but visible ASCII */
                "Errand-On-Behalf-Of"?: string;
            };
            path: {
                /** @description The batch's id */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The report (a header line only while no child failed or was cancelled) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/csv": string;
                };
            };
            /** @description A malformed request: here, perhaps, an `Errand-On-Behalf-Of` that is not `tenant/user` (`bad_request`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `Errand-On-Behalf-Of` with a token that is not a service's, or a tenant or job type the service token does not list (`forbidden`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No such batch of the caller's (`not_found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Past a rate limit (`rate_limited`): every answer of a user route carries `RateLimit-Policy` (`"user";q=100;w=10`: a burst over its window) and `RateLimit` (`"user";r=98;t=1`) of the IETF httpapi draft */
            429: {
                headers: {
                    /** @description Its standing: remaining `r`, seconds `t` until it is whole again */
                    RateLimit?: string;
                    /** @description The budget nearest its end: name, quota `q` per window `w` seconds */
                    "RateLimit-Policy"?: string;
                    /** @description Seconds until a request passes again */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    post_batches_by_job_type: {
        parameters: {
            query?: never;
            header: {
                /** @description With a service token (scope `service`): the tenant's user it acts for, `tenant/user`, each part percent-encoded where it holds `/`, `%` or anything but visible ASCII */
                "Errand-On-Behalf-Of"?: string;
                /** @description One per intent, as for jobs */
                "Idempotency-Key": string;
            };
            path: {
                /** @description A configured job type: each item becomes a job of it */
                job_type: string;
            };
            cookie?: never;
        };
        /** @description `{"items": [params, …]}`: each item is a job's params, checked against the type's schema */
        requestBody: {
            content: {
                "application/json": Record<string, unknown>;
            };
        };
        responses: {
            /** @description The key's batch, replayed (`Idempotent-Replayed: true`) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["BatchView"];
                };
            };
            /** @description A new batch, processing */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["BatchView"];
                };
            };
            /** @description Missing or malformed key, or a body that is not `{"items": [...]}` (`bad_request`, `invalid_idempotency_key`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `Errand-On-Behalf-Of` with a token that is not a service's, or a tenant or job type the service token does not list (`forbidden`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Unknown job type (`unknown_job_type`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Body over `max_items` × 64 KiB, or over 32 MiB (`payload_too_large`) */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No items, or more than `[batches] max_items` (`invalid_batch`, refused as the body streams), or a type with an admission key (`invalid_batch`: its jobs are submitted one at a time); an item refused (`invalid_params`, `field` e.g. `/items/3/to`; an item over 64 KiB is refused as the body streams); or the key reused for another request (`idempotency_key_reused`) */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The children would take the caller over a quota of unfinished jobs (`quota_exceeded`; nothing was recorded), or past a rate limit (`rate_limited`) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again (with the same key) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    download: {
        parameters: {
            query: {
                /** @description When the link expires, seconds since the epoch */
                expires: number;
                /** @description The file name a download is saved as */
                name: string;
                /** @description The link's signature: the only authorisation */
                sig: string;
            };
            header?: never;
            path: {
                /** @description The file's storage key */
                key: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The file */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/octet-stream": number[];
                };
            };
            /** @description Tampered or expired link (`forbidden`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not a local-storage deployment, or no such file (`not_found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Deleted at the end of its retention (`result_expired`) */
            410: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    healthz: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Up */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Health"];
                };
            };
        };
    };
    elements: {
        parameters: {
            query?: {
                /** @description A language tag, e.g. `fr` */
                locale?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The words, and the language they are in */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ElementWords"];
                };
            };
        };
    };
    get_jobs: {
        parameters: {
            query?: {
                /** @description `next_cursor` of the previous page */
                cursor?: string;
                /** @description 1 to 100, default 20 */
                limit?: number;
                /** @description pending, processing, completed, failed or cancelled */
                status?: string;
                /** @description A job type's name */
                type?: string;
            };
            header?: {
                /** @description With a service token (scope `service`): the tenant's user it acts for, `tenant/user`, each part percent-encoded where it holds `/`, `%` or anything but visible ASCII */
                "Errand-On-Behalf-Of"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of jobs */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["JobList"];
                };
            };
            /** @description A bad filter, limit or cursor (`bad_request`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `Errand-On-Behalf-Of` with a token that is not a service's, or a tenant or job type the service token does not list (`forbidden`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Past a rate limit (`rate_limited`): every answer of a user route carries `RateLimit-Policy` (`"user";q=100;w=10`: a burst over its window) and `RateLimit` (`"user";r=98;t=1`) of the IETF httpapi draft */
            429: {
                headers: {
                    /** @description Its standing: remaining `r`, seconds `t` until it is whole again */
                    RateLimit?: string;
                    /** @description The budget nearest its end: name, quota `q` per window `w` seconds */
                    "RateLimit-Policy"?: string;
                    /** @description Seconds until a request passes again */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    get_jobs_by_id: {
        parameters: {
            query?: never;
            header?: {
                /** @description With a service token (scope `service`): the tenant's user it acts for, `tenant/user`, each part percent-encoded where it holds `/`, `%` or anything but visible ASCII */
                "Errand-On-Behalf-Of"?: string;
            };
            path: {
                /** @description The job's id */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The caller's job */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["JobView"];
                };
            };
            /** @description A malformed request: here, perhaps, an `Errand-On-Behalf-Of` that is not `tenant/user` (`bad_request`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `Errand-On-Behalf-Of` with a token that is not a service's, or a tenant or job type the service token does not list (`forbidden`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No such job of the caller's (`not_found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Past a rate limit (`rate_limited`): every answer of a user route carries `RateLimit-Policy` (`"user";q=100;w=10`: a burst over its window) and `RateLimit` (`"user";r=98;t=1`) of the IETF httpapi draft */
            429: {
                headers: {
                    /** @description Its standing: remaining `r`, seconds `t` until it is whole again */
                    RateLimit?: string;
                    /** @description The budget nearest its end: name, quota `q` per window `w` seconds */
                    "RateLimit-Policy"?: string;
                    /** @description Seconds until a request passes again */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    post_jobs_by_id_cancel: {
        parameters: {
            query?: never;
            header?: {
                /** @description With a service token (scope `service`): the tenant's user it acts for, `tenant/user`, each part percent-encoded where it holds `/`, `%` or anything but visible ASCII */
                "Errand-On-Behalf-Of"?: string;
            };
            path: {
                /** @description The job's id */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The job, cancelled */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["JobView"];
                };
            };
            /** @description The job, being stopped (state `cancelling`) */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["JobView"];
                };
            };
            /** @description A malformed request: here, perhaps, an `Errand-On-Behalf-Of` that is not `tenant/user` (`bad_request`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `Errand-On-Behalf-Of` with a token that is not a service's, or a tenant or job type the service token does not list (`forbidden`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No such job of the caller's (`not_found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The job already completed or failed (`job_already_ended`) */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Past a rate limit (`rate_limited`): every answer of a user route carries `RateLimit-Policy` (`"user";q=100;w=10`: a burst over its window) and `RateLimit` (`"user";r=98;t=1`) of the IETF httpapi draft */
            429: {
                headers: {
                    /** @description Its standing: remaining `r`, seconds `t` until it is whole again */
                    RateLimit?: string;
                    /** @description The budget nearest its end: name, quota `q` per window `w` seconds */
                    "RateLimit-Policy"?: string;
                    /** @description Seconds until a request passes again */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    result: {
        parameters: {
            query?: never;
            header?: {
                /** @description With a service token (scope `service`): the tenant's user it acts for, `tenant/user`, each part percent-encoded where it holds `/`, `%` or anything but visible ASCII */
                "Errand-On-Behalf-Of"?: string;
            };
            path: {
                /** @description The job's id */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description To a fresh signed download URL (`Location`) */
            303: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description A malformed request: here, perhaps, an `Errand-On-Behalf-Of` that is not `tenant/user` (`bad_request`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `Errand-On-Behalf-Of` with a token that is not a service's, or a tenant or job type the service token does not list (`forbidden`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No such job of the caller's, or one without a file (`not_found`, `no_result`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The job has not completed (`result_not_ready`) */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The file's retention ended (`result_expired`) */
            410: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Past a rate limit (`rate_limited`): every answer of a user route carries `RateLimit-Policy` (`"user";q=100;w=10`: a burst over its window) and `RateLimit` (`"user";r=98;t=1`) of the IETF httpapi draft */
            429: {
                headers: {
                    /** @description Its standing: remaining `r`, seconds `t` until it is whole again */
                    RateLimit?: string;
                    /** @description The budget nearest its end: name, quota `q` per window `w` seconds */
                    "RateLimit-Policy"?: string;
                    /** @description Seconds until a request passes again */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    post_jobs_by_job_type: {
        parameters: {
            query?: {
                /** @description An export's file format, one of those its type offers (its first when absent): part of the request, so the same key with another format is refused */
                format?: string;
                /** @description How soon it runs beside the caller's tenant's other jobs you clicked for, -4 to 4 (default 0), added to its type's; it always runs before scheduled and bulk work */
                priority?: number;
            };
            header: {
                /** @description With a service token (scope `service`): the tenant's user it acts for, `tenant/user`, each part percent-encoded where it holds `/`, `%` or anything but visible ASCII */
                "Errand-On-Behalf-Of"?: string;
                /** @description One per intent: a retry or double-click sends the same key (1 to 255 visible ASCII characters) */
                "Idempotency-Key": string;
            };
            path: {
                /** @description A configured job type (each also has an operation of its own) */
                job_type: string;
            };
            cookie?: never;
        };
        /** @description The job's params: a JSON object, checked against the type's schema */
        requestBody: {
            content: {
                "application/json": Record<string, unknown>;
            };
        };
        responses: {
            /** @description The key's job, replayed (`Idempotent-Replayed: true`); or, for a type with an admission key, the caller's unfinished job for the same resource, joined (`Errand-Joined: true`) or debounced (`Errand-Debounced: true`: it took this request's params and starts later) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["JobView"];
                };
            };
            /** @description A new job, processing */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["JobView"];
                };
            };
            /** @description Missing or malformed key, a body that is not a JSON object, or a priority outside -4 to 4 (`bad_request`, `invalid_idempotency_key`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `Errand-On-Behalf-Of` with a token that is not a service's, or a tenant or job type the service token does not list (`forbidden`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Unknown job type (`unknown_job_type`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description An unfinished job holds the type's admission key (`admission_conflict`, with `job_id`): the type says `on_conflict = "reject"`, or the job is a colleague's */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Body over 64 KiB (`payload_too_large`) */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Params refused (`invalid_params`, with `field`), a format the type does not write (`invalid_format`, with `field` = `format`), or the key reused for another request (`idempotency_key_reused`) */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description A new job over one of the caller's quotas of unfinished jobs (`quota_exceeded`, with `scope`, `limit` and `count`; a replay of an existing key is answered as ever), or past a rate limit (`rate_limited`, with the `RateLimit` headers) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again (with the same key) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The database is away (`unavailable`), or errand sheds new jobs under overload (`overloaded`): nothing was recorded; try again with the same key */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    create_export_creator_earnings: {
        parameters: {
            query?: {
                /** @description An export's file format, one of those its type offers (its first when absent): part of the request, so the same key with another format is refused */
                format?: string;
                /** @description How soon it runs beside the caller's tenant's other jobs you clicked for, -4 to 4 (default 0), added to its type's; it always runs before scheduled and bulk work */
                priority?: number;
            };
            header: {
                /** @description With a service token (scope `service`): the tenant's user it acts for, `tenant/user`, each part percent-encoded where it holds `/`, `%` or anything but visible ASCII */
                "Errand-On-Behalf-Of"?: string;
                /** @description One per intent: a retry or double-click sends the same key (1 to 255 visible ASCII characters) */
                "Idempotency-Key": string;
            };
            path?: never;
            cookie?: never;
        };
        /** @description The job's params: a JSON object, checked against the type's schema */
        requestBody: {
            content: {
                "application/json": {
                    creator_id?: string;
                    /** Format: date */
                    from: string;
                    /** Format: date */
                    to: string;
                };
            };
        };
        responses: {
            /** @description The key's job, replayed (`Idempotent-Replayed: true`); or, for a type with an admission key, the caller's unfinished job for the same resource, joined (`Errand-Joined: true`) or debounced (`Errand-Debounced: true`: it took this request's params and starts later) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["JobView"];
                };
            };
            /** @description A new job, processing */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["JobView"];
                };
            };
            /** @description Missing or malformed key, a body that is not a JSON object, or a priority outside -4 to 4 (`bad_request`, `invalid_idempotency_key`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `Errand-On-Behalf-Of` with a token that is not a service's, or a tenant or job type the service token does not list (`forbidden`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description An unfinished job holds the type's admission key (`admission_conflict`, with `job_id`): the type says `on_conflict = "reject"`, or the job is a colleague's */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Body over 64 KiB (`payload_too_large`) */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Params refused (`invalid_params`, with `field`), a format the type does not write (`invalid_format`, with `field` = `format`), or the key reused for another request (`idempotency_key_reused`) */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description A new job over one of the caller's quotas of unfinished jobs (`quota_exceeded`, with `scope`, `limit` and `count`; a replay of an existing key is answered as ever), or past a rate limit (`rate_limited`, with the `RateLimit` headers) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again (with the same key) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The database is away (`unavailable`), or errand sheds new jobs under overload (`overloaded`): nothing was recorded; try again with the same key */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    create_export_sales_report: {
        parameters: {
            query?: {
                /** @description An export's file format, one of those its type offers (its first when absent): part of the request, so the same key with another format is refused */
                format?: string;
                /** @description How soon it runs beside the caller's tenant's other jobs you clicked for, -4 to 4 (default 0), added to its type's; it always runs before scheduled and bulk work */
                priority?: number;
            };
            header: {
                /** @description With a service token (scope `service`): the tenant's user it acts for, `tenant/user`, each part percent-encoded where it holds `/`, `%` or anything but visible ASCII */
                "Errand-On-Behalf-Of"?: string;
                /** @description One per intent: a retry or double-click sends the same key (1 to 255 visible ASCII characters) */
                "Idempotency-Key": string;
            };
            path?: never;
            cookie?: never;
        };
        /** @description The job's params: a JSON object, checked against the type's schema */
        requestBody: {
            content: {
                "application/json": {
                    /** Format: date */
                    from: string;
                    /** @enum {string} */
                    status?: "paid" | "pending" | "refunded";
                    /** Format: date */
                    to: string;
                };
            };
        };
        responses: {
            /** @description The key's job, replayed (`Idempotent-Replayed: true`); or, for a type with an admission key, the caller's unfinished job for the same resource, joined (`Errand-Joined: true`) or debounced (`Errand-Debounced: true`: it took this request's params and starts later) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["JobView"];
                };
            };
            /** @description A new job, processing */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["JobView"];
                };
            };
            /** @description Missing or malformed key, a body that is not a JSON object, or a priority outside -4 to 4 (`bad_request`, `invalid_idempotency_key`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `Errand-On-Behalf-Of` with a token that is not a service's, or a tenant or job type the service token does not list (`forbidden`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description An unfinished job holds the type's admission key (`admission_conflict`, with `job_id`): the type says `on_conflict = "reject"`, or the job is a colleague's */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Body over 64 KiB (`payload_too_large`) */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Params refused (`invalid_params`, with `field`), a format the type does not write (`invalid_format`, with `field` = `format`), or the key reused for another request (`idempotency_key_reused`) */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description A new job over one of the caller's quotas of unfinished jobs (`quota_exceeded`, with `scope`, `limit` and `count`; a replay of an existing key is answered as ever), or past a rate limit (`rate_limited`, with the `RateLimit` headers) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again (with the same key) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The database is away (`unavailable`), or errand sheds new jobs under overload (`overloaded`): nothing was recorded; try again with the same key */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    create_noop: {
        parameters: {
            query?: {
                /** @description An export's file format, one of those its type offers (its first when absent): part of the request, so the same key with another format is refused */
                format?: string;
                /** @description How soon it runs beside the caller's tenant's other jobs you clicked for, -4 to 4 (default 0), added to its type's; it always runs before scheduled and bulk work */
                priority?: number;
            };
            header: {
                /** @description With a service token (scope `service`): the tenant's user it acts for, `tenant/user`, each part percent-encoded where it holds `/`, `%` or anything but visible ASCII */
                "Errand-On-Behalf-Of"?: string;
                /** @description One per intent: a retry or double-click sends the same key (1 to 255 visible ASCII characters) */
                "Idempotency-Key": string;
            };
            path?: never;
            cookie?: never;
        };
        /** @description The job's params: a JSON object, checked against the type's schema */
        requestBody: {
            content: {
                "application/json": Record<string, unknown>;
            };
        };
        responses: {
            /** @description The key's job, replayed (`Idempotent-Replayed: true`); or, for a type with an admission key, the caller's unfinished job for the same resource, joined (`Errand-Joined: true`) or debounced (`Errand-Debounced: true`: it took this request's params and starts later) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["JobView"];
                };
            };
            /** @description A new job, processing */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["JobView"];
                };
            };
            /** @description Missing or malformed key, a body that is not a JSON object, or a priority outside -4 to 4 (`bad_request`, `invalid_idempotency_key`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `Errand-On-Behalf-Of` with a token that is not a service's, or a tenant or job type the service token does not list (`forbidden`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description An unfinished job holds the type's admission key (`admission_conflict`, with `job_id`): the type says `on_conflict = "reject"`, or the job is a colleague's */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Body over 64 KiB (`payload_too_large`) */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Params refused (`invalid_params`, with `field`), a format the type does not write (`invalid_format`, with `field` = `format`), or the key reused for another request (`idempotency_key_reused`) */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description A new job over one of the caller's quotas of unfinished jobs (`quota_exceeded`, with `scope`, `limit` and `count`; a replay of an existing key is answered as ever), or past a rate limit (`rate_limited`, with the `RateLimit` headers) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again (with the same key) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The database is away (`unavailable`), or errand sheds new jobs under overload (`overloaded`): nothing was recorded; try again with the same key */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    create_sleep: {
        parameters: {
            query?: {
                /** @description An export's file format, one of those its type offers (its first when absent): part of the request, so the same key with another format is refused */
                format?: string;
                /** @description How soon it runs beside the caller's tenant's other jobs you clicked for, -4 to 4 (default 0), added to its type's; it always runs before scheduled and bulk work */
                priority?: number;
            };
            header: {
                /** @description With a service token (scope `service`): the tenant's user it acts for, `tenant/user`, each part percent-encoded where it holds `/`, `%` or anything but visible ASCII */
                "Errand-On-Behalf-Of"?: string;
                /** @description One per intent: a retry or double-click sends the same key (1 to 255 visible ASCII characters) */
                "Idempotency-Key": string;
            };
            path?: never;
            cookie?: never;
        };
        /** @description The job's params: a JSON object, checked against the type's schema */
        requestBody: {
            content: {
                "application/json": {
                    fail_times?: number;
                    ms?: number;
                };
            };
        };
        responses: {
            /** @description The key's job, replayed (`Idempotent-Replayed: true`); or, for a type with an admission key, the caller's unfinished job for the same resource, joined (`Errand-Joined: true`) or debounced (`Errand-Debounced: true`: it took this request's params and starts later) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["JobView"];
                };
            };
            /** @description A new job, processing */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["JobView"];
                };
            };
            /** @description Missing or malformed key, a body that is not a JSON object, or a priority outside -4 to 4 (`bad_request`, `invalid_idempotency_key`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `Errand-On-Behalf-Of` with a token that is not a service's, or a tenant or job type the service token does not list (`forbidden`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description An unfinished job holds the type's admission key (`admission_conflict`, with `job_id`): the type says `on_conflict = "reject"`, or the job is a colleague's */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Body over 64 KiB (`payload_too_large`) */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Params refused (`invalid_params`, with `field`), a format the type does not write (`invalid_format`, with `field` = `format`), or the key reused for another request (`idempotency_key_reused`) */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description A new job over one of the caller's quotas of unfinished jobs (`quota_exceeded`, with `scope`, `limit` and `count`; a replay of an existing key is answered as ever), or past a rate limit (`rate_limited`, with the `RateLimit` headers) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again (with the same key) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The database is away (`unavailable`), or errand sheds new jobs under overload (`overloaded`): nothing was recorded; try again with the same key */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    open: {
        parameters: {
            query: {
                /** @description When the link expires, seconds since the epoch */
                expires: number;
                /** @description The link's signature: the only authorisation */
                sig: string;
                /** @description The job's tenant */
                tenant: string;
                /** @description The job's owner */
                user: string;
            };
            header?: never;
            path: {
                /** @description The job's id */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page: the failed job's error, or the job's status */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/html": unknown;
                };
            };
            /** @description A completed job's file: to a fresh, short-lived download URL (`Location`) */
            303: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description A tampered, expired or foreign link: a page */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/html": unknown;
                };
            };
            /** @description The file's retention ended, or the job was pruned: a page */
            410: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/html": unknown;
                };
            };
        };
    };
    get_me_notification_preferences: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description One entry per category of the configured job types, in name order */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PreferencesView"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Past a rate limit (`rate_limited`): every answer of a user route carries `RateLimit-Policy` (`"user";q=100;w=10`: a burst over its window) and `RateLimit` (`"user";r=98;t=1`) of the IETF httpapi draft */
            429: {
                headers: {
                    /** @description Its standing: remaining `r`, seconds `t` until it is whole again */
                    RateLimit?: string;
                    /** @description The budget nearest its end: name, quota `q` per window `w` seconds */
                    "RateLimit-Policy"?: string;
                    /** @description Seconds until a request passes again */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    put_me_notification_preferences_by_category: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description A category of the configured job types */
                category: string;
            };
            cookie?: never;
        };
        /** @description Channels to change: `in_app`, `email` and (where offered) `push`, each `true` (or `"instant"`) or `false` (or `"off"`), and `email` also `"digest"` once the caller set a digest time (`/me/notification-settings`), e.g. `{"email": "digest"}` */
        requestBody: {
            content: {
                "application/json": Record<string, unknown>;
            };
        };
        responses: {
            /** @description The category as it now stands */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CategoryView"];
                };
            };
            /** @description A body that is not a JSON object (`bad_request`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description An unknown category or channel, a value that is not a setting, turning off a required category, or a digest for another channel than email, for a required category or before a digest time is set (`invalid_preference`) */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Past a rate limit (`rate_limited`): every answer of a user route carries `RateLimit-Policy` (`"user";q=100;w=10`: a burst over its window) and `RateLimit` (`"user";r=98;t=1`) of the IETF httpapi draft */
            429: {
                headers: {
                    /** @description Its standing: remaining `r`, seconds `t` until it is whole again */
                    RateLimit?: string;
                    /** @description The budget nearest its end: name, quota `q` per window `w` seconds */
                    "RateLimit-Policy"?: string;
                    /** @description Seconds until a request passes again */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    get_me_notification_settings: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description As set (nulls until set) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SettingsView"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Past a rate limit (`rate_limited`): every answer of a user route carries `RateLimit-Policy` (`"user";q=100;w=10`: a burst over its window) and `RateLimit` (`"user";r=98;t=1`) of the IETF httpapi draft */
            429: {
                headers: {
                    /** @description Its standing: remaining `r`, seconds `t` until it is whole again */
                    RateLimit?: string;
                    /** @description The budget nearest its end: name, quota `q` per window `w` seconds */
                    "RateLimit-Policy"?: string;
                    /** @description Seconds until a request passes again */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    put_me_notification_settings: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description `{"timezone": "Europe/Paris", "quiet_hours": {"start": "21:00", "end": "08:00"}, "digest": {"every": "day", "at": "08:00"}}`; without a digest, what a digest held goes at once */
        requestBody: {
            content: {
                "application/json": components["schemas"]["SettingsView"];
            };
        };
        responses: {
            /** @description As now set */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SettingsView"];
                };
            };
            /** @description A body that is not such an object (`bad_request`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No time zone (and no `zoneinfo` claim) or an unknown one, a time that is not HH:MM, quiet hours that start when they end, or a digest that is not every `hour` or every `day` `at` a time (`invalid_preference`) */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Past a rate limit (`rate_limited`): every answer of a user route carries `RateLimit-Policy` (`"user";q=100;w=10`: a burst over its window) and `RateLimit` (`"user";r=98;t=1`) of the IETF httpapi draft */
            429: {
                headers: {
                    /** @description Its standing: remaining `r`, seconds `t` until it is whole again */
                    RateLimit?: string;
                    /** @description The budget nearest its end: name, quota `q` per window `w` seconds */
                    "RateLimit-Policy"?: string;
                    /** @description Seconds until a request passes again */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    get_me_push_subscriptions: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The caller's devices and errand's VAPID public key */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SubscriptionList"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description This errand does not offer Web Push (`push_not_enabled`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Past a rate limit (`rate_limited`): every answer of a user route carries `RateLimit-Policy` (`"user";q=100;w=10`: a burst over its window) and `RateLimit` (`"user";r=98;t=1`) of the IETF httpapi draft */
            429: {
                headers: {
                    /** @description Its standing: remaining `r`, seconds `t` until it is whole again */
                    RateLimit?: string;
                    /** @description The budget nearest its end: name, quota `q` per window `w` seconds */
                    "RateLimit-Policy"?: string;
                    /** @description Seconds until a request passes again */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    subscribe: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description A browser's `PushSubscription.toJSON()`: `endpoint` and `keys` (`p256dh`, `auth`) */
        requestBody: {
            content: {
                "application/json": Record<string, unknown>;
            };
        };
        responses: {
            /** @description Already subscribed: its keys renewed */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SubscriptionView"];
                };
            };
            /** @description Subscribed */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SubscriptionView"];
                };
            };
            /** @description A body that is not such an object (`bad_request`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description This errand does not offer Web Push (`push_not_enabled`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description An endpoint off the push services' hosts or the outbound rules, keys that are not a subscription's, or the caller's most devices already (`invalid_push_subscription`) */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Past a rate limit (`rate_limited`): every answer of a user route carries `RateLimit-Policy` (`"user";q=100;w=10`: a burst over its window) and `RateLimit` (`"user";r=98;t=1`) of the IETF httpapi draft */
            429: {
                headers: {
                    /** @description Its standing: remaining `r`, seconds `t` until it is whole again */
                    RateLimit?: string;
                    /** @description The budget nearest its end: name, quota `q` per window `w` seconds */
                    "RateLimit-Policy"?: string;
                    /** @description Seconds until a request passes again */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    unsubscribe: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The subscription's id */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Unsubscribed: the device hears of nothing more */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No such device of the caller's (`not_found`), or no Web Push here (`push_not_enabled`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Past a rate limit (`rate_limited`): every answer of a user route carries `RateLimit-Policy` (`"user";q=100;w=10`: a burst over its window) and `RateLimit` (`"user";r=98;t=1`) of the IETF httpapi draft */
            429: {
                headers: {
                    /** @description Its standing: remaining `r`, seconds `t` until it is whole again */
                    RateLimit?: string;
                    /** @description The budget nearest its end: name, quota `q` per window `w` seconds */
                    "RateLimit-Policy"?: string;
                    /** @description Seconds until a request passes again */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    metrics: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Prometheus text, or OpenMetrics */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/openmetrics-text": string;
                    "text/plain": string;
                };
            };
        };
    };
    get_notifications: {
        parameters: {
            query?: {
                /** @description `next_cursor` of the previous page */
                cursor?: string;
                /** @description 1 to 100, default 20 */
                limit?: number;
                /** @description `all` (the default: every one not archived), `unread`, `unseen` or `archived` */
                status?: string;
                /** @description Only unread notifications (as `status=unread`) */
                unread_only?: boolean;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of the feed */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["FeedPage"];
                };
            };
            /** @description Bad status, limit or cursor (`bad_request`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Past a rate limit (`rate_limited`): every answer of a user route carries `RateLimit-Policy` (`"user";q=100;w=10`: a burst over its window) and `RateLimit` (`"user";r=98;t=1`) of the IETF httpapi draft */
            429: {
                headers: {
                    /** @description Its standing: remaining `r`, seconds `t` until it is whole again */
                    RateLimit?: string;
                    /** @description The budget nearest its end: name, quota `q` per window `w` seconds */
                    "RateLimit-Policy"?: string;
                    /** @description Seconds until a request passes again */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    archive: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The notification's id */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Archived */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No such notification of the caller (`not_found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Past a rate limit (`rate_limited`): every answer of a user route carries `RateLimit-Policy` (`"user";q=100;w=10`: a burst over its window) and `RateLimit` (`"user";r=98;t=1`) of the IETF httpapi draft */
            429: {
                headers: {
                    /** @description Its standing: remaining `r`, seconds `t` until it is whole again */
                    RateLimit?: string;
                    /** @description The budget nearest its end: name, quota `q` per window `w` seconds */
                    "RateLimit-Policy"?: string;
                    /** @description Seconds until a request passes again */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    mark_read: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The notification's id */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Marked read */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No such notification of the caller (`not_found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Past a rate limit (`rate_limited`): every answer of a user route carries `RateLimit-Policy` (`"user";q=100;w=10`: a burst over its window) and `RateLimit` (`"user";r=98;t=1`) of the IETF httpapi draft */
            429: {
                headers: {
                    /** @description Its standing: remaining `r`, seconds `t` until it is whole again */
                    RateLimit?: string;
                    /** @description The budget nearest its end: name, quota `q` per window `w` seconds */
                    "RateLimit-Policy"?: string;
                    /** @description Seconds until a request passes again */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    archive_read: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description How many were archived */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Archived"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Past a rate limit (`rate_limited`): every answer of a user route carries `RateLimit-Policy` (`"user";q=100;w=10`: a burst over its window) and `RateLimit` (`"user";r=98;t=1`) of the IETF httpapi draft */
            429: {
                headers: {
                    /** @description Its standing: remaining `r`, seconds `t` until it is whole again */
                    RateLimit?: string;
                    /** @description The budget nearest its end: name, quota `q` per window `w` seconds */
                    "RateLimit-Policy"?: string;
                    /** @description Seconds until a request passes again */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    mark_all_read: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description How many were marked */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["MarkedRead"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Past a rate limit (`rate_limited`): every answer of a user route carries `RateLimit-Policy` (`"user";q=100;w=10`: a burst over its window) and `RateLimit` (`"user";r=98;t=1`) of the IETF httpapi draft */
            429: {
                headers: {
                    /** @description Its standing: remaining `r`, seconds `t` until it is whole again */
                    RateLimit?: string;
                    /** @description The budget nearest its end: name, quota `q` per window `w` seconds */
                    "RateLimit-Policy"?: string;
                    /** @description Seconds until a request passes again */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    mark_all_seen: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description How many were marked */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["MarkedSeen"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Past a rate limit (`rate_limited`): every answer of a user route carries `RateLimit-Policy` (`"user";q=100;w=10`: a burst over its window) and `RateLimit` (`"user";r=98;t=1`) of the IETF httpapi draft */
            429: {
                headers: {
                    /** @description Its standing: remaining `r`, seconds `t` until it is whole again */
                    RateLimit?: string;
                    /** @description The budget nearest its end: name, quota `q` per window `w` seconds */
                    "RateLimit-Policy"?: string;
                    /** @description Seconds until a request passes again */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    stream: {
        parameters: {
            query?: {
                /** @description A stream ticket, for clients that cannot send Authorization */
                ticket?: string;
            };
            header?: {
                /** @description Replay what came after this notification */
                "Last-Event-ID"?: string | null;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description `job_completed` events (data: a notification, id: its id) `job_cancelled` events (the same, for a job the caller cancelled), `job_superseded` events (the same, for a job a newer request of the caller's replaced), `unread_count` events (data: `{"unread_count": n, "unseen_count": m}`, no id) `job_progress` events (data: `{"job_id", "progress"}`, no id), `batch_progress` events (data: `{"batch_id", "total", "completed", "failed", "cancelled", "status"}`, no id), and `batch_completed` and `webhook_disabled` events (data: a notification, id: its id) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/event-stream": string;
                };
            };
            /** @description No valid token or ticket (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The caller (or this server) has as many streams open as allowed (`too_many_streams`), or the caller is past a rate limit (`rate_limited`, with the `RateLimit` headers) */
            429: {
                headers: {
                    /** @description Seconds to wait before opening a stream again */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    stream_ticket: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A ticket for the stream */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["StreamTicket"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Too many of the caller's tickets are unused (`too_many_streams`), or past a rate limit (`rate_limited`) */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    readyz: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Ready */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Health"];
                };
            };
            /** @description Database unreachable or not migrated (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    get_schedules: {
        parameters: {
            query?: {
                /** @description `next_cursor` of the previous page */
                cursor?: string;
                /** @description 1 to 100, default 20 */
                limit?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of the caller's schedules */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ScheduleList"];
                };
            };
            /** @description A bad limit or cursor (`bad_request`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Past a rate limit (`rate_limited`): every answer of a user route carries `RateLimit-Policy` (`"user";q=100;w=10`: a burst over its window) and `RateLimit` (`"user";r=98;t=1`) of the IETF httpapi draft */
            429: {
                headers: {
                    /** @description Its standing: remaining `r`, seconds `t` until it is whole again */
                    RateLimit?: string;
                    /** @description The budget nearest its end: name, quota `q` per window `w` seconds */
                    "RateLimit-Policy"?: string;
                    /** @description Seconds until a request passes again */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    get_schedules_by_id: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The schedule's id */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The caller's schedule */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ScheduleView"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No such schedule of the caller's (`not_found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Past a rate limit (`rate_limited`): every answer of a user route carries `RateLimit-Policy` (`"user";q=100;w=10`: a burst over its window) and `RateLimit` (`"user";r=98;t=1`) of the IETF httpapi draft */
            429: {
                headers: {
                    /** @description Its standing: remaining `r`, seconds `t` until it is whole again */
                    RateLimit?: string;
                    /** @description The budget nearest its end: name, quota `q` per window `w` seconds */
                    "RateLimit-Policy"?: string;
                    /** @description Seconds until a request passes again */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    delete: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The schedule's id */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No such schedule of the caller's (`not_found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Past a rate limit (`rate_limited`): every answer of a user route carries `RateLimit-Policy` (`"user";q=100;w=10`: a burst over its window) and `RateLimit` (`"user";r=98;t=1`) of the IETF httpapi draft */
            429: {
                headers: {
                    /** @description Its standing: remaining `r`, seconds `t` until it is whole again */
                    RateLimit?: string;
                    /** @description The budget nearest its end: name, quota `q` per window `w` seconds */
                    "RateLimit-Policy"?: string;
                    /** @description Seconds until a request passes again */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    change: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The schedule's id */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ScheduleChange"];
            };
        };
        responses: {
            /** @description The schedule, changed */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ScheduleView"];
                };
            };
            /** @description A malformed body (`bad_request`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No such schedule of the caller's (`not_found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description As for `POST` (`invalid_schedule`, `invalid_params`, with `field`) */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Past a rate limit (`rate_limited`): every answer of a user route carries `RateLimit-Policy` (`"user";q=100;w=10`: a burst over its window) and `RateLimit` (`"user";r=98;t=1`) of the IETF httpapi draft */
            429: {
                headers: {
                    /** @description Its standing: remaining `r`, seconds `t` until it is whole again */
                    RateLimit?: string;
                    /** @description The budget nearest its end: name, quota `q` per window `w` seconds */
                    "RateLimit-Policy"?: string;
                    /** @description Seconds until a request passes again */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    create: {
        parameters: {
            query?: never;
            header: {
                /** @description One per intent, as for jobs */
                "Idempotency-Key": string;
            };
            path: {
                /** @description A job type configured `schedulable` */
                job_type: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["NewScheduleRequest"];
            };
        };
        responses: {
            /** @description The key's schedule, replayed (`Idempotent-Replayed: true`) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ScheduleView"];
                };
            };
            /** @description A new schedule, with its `next_run_at` */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ScheduleView"];
                };
            };
            /** @description Missing or malformed key, or a malformed body (`bad_request`, `invalid_idempotency_key`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Unknown job type (`unknown_job_type`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description A type that cannot be scheduled (`job_type_not_schedulable`); a bad `cron`, `timezone`, `ends_at` or `catch_up_limit`, or one firing more often than the type allows (`invalid_schedule`, with `field`); params refused (`invalid_params`, `field` e.g. `/params/to`); the key reused for another request (`idempotency_key_reused`) */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description As many schedules as one user may have (`quota_exceeded`, `scope` `user_schedules`), or past a rate limit (`rate_limited`) */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    get_schedules_pause_by_token: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description From a scheduled job's email: the only authorisation */
                token: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page asking to confirm, with a button that POSTs; nothing changes */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/html": unknown;
                };
            };
            /** @description A tampered or foreign link: a page */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/html": unknown;
                };
            };
            /** @description The schedule was deleted: a page */
            410: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/html": unknown;
                };
            };
        };
    };
    post_schedules_pause_by_token: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description From a scheduled job's email: the only authorisation */
                token: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Paused (again, if it was already): a page */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/html": unknown;
                };
            };
            /** @description A tampered or foreign link: a page */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/html": unknown;
                };
            };
            /** @description The schedule was deleted: a page */
            410: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/html": unknown;
                };
            };
        };
    };
    get_tenant_branding: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description `{name, logo_url, primary_color, from_name, footer}`, each null until set */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": Record<string, unknown>;
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Past a rate limit (`rate_limited`): every answer of a user route carries `RateLimit-Policy` (`"user";q=100;w=10`: a burst over its window) and `RateLimit` (`"user";r=98;t=1`) of the IETF httpapi draft */
            429: {
                headers: {
                    /** @description Its standing: remaining `r`, seconds `t` until it is whole again */
                    RateLimit?: string;
                    /** @description The budget nearest its end: name, quota `q` per window `w` seconds */
                    "RateLimit-Policy"?: string;
                    /** @description Seconds until a request passes again */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    put_tenant_branding: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description `{"name": "Acme", "logo_url": "https://…", "primary_color": "#2457d6", "from_name": "Acme reports", "footer": "Sent for {name}."}`: plain text (at most 100 characters, the footer 500), the footer's only variable `{name}` */
        requestBody: {
            content: {
                "application/json": Record<string, unknown>;
            };
        };
        responses: {
            /** @description As now set */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": Record<string, unknown>;
                };
            };
            /** @description A body that is not such an object (`bad_request`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not a tenant admin's token (`forbidden`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Text too long or with control characters, a colour that is not #rrggbb, a footer variable other than {name}, or a logo that is not https or not on a public address (`invalid_branding`) */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Past a rate limit (`rate_limited`): every answer of a user route carries `RateLimit-Policy` (`"user";q=100;w=10`: a burst over its window) and `RateLimit` (`"user";r=98;t=1`) of the IETF httpapi draft */
            429: {
                headers: {
                    /** @description Its standing: remaining `r`, seconds `t` until it is whole again */
                    RateLimit?: string;
                    /** @description The budget nearest its end: name, quota `q` per window `w` seconds */
                    "RateLimit-Policy"?: string;
                    /** @description Seconds until a request passes again */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    erase_for_tenant_admin: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description `user` (of the admin's own tenant); `dry_run` (default false: erase) */
        requestBody: {
            content: {
                "application/json": Record<string, unknown>;
            };
        };
        responses: {
            /** @description What was found (and, after a real run, what is left) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErasureReport"];
                };
            };
            /** @description A body that is not such an object (`bad_request`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not a tenant admin's token (`forbidden`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Past a rate limit (`rate_limited`): every answer of a user route carries `RateLimit-Policy` (`"user";q=100;w=10`: a burst over its window) and `RateLimit` (`"user";r=98;t=1`) of the IETF httpapi draft */
            429: {
                headers: {
                    /** @description Its standing: remaining `r`, seconds `t` until it is whole again */
                    RateLimit?: string;
                    /** @description The budget nearest its end: name, quota `q` per window `w` seconds */
                    "RateLimit-Policy"?: string;
                    /** @description Seconds until a request passes again */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    get_tenant_notification_defaults: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description One entry per category of the configured job types, in name order; `sources` says which channels the tenant set (`tenant`) and which the configuration decides (`config`) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DefaultsView"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not a tenant admin's token (`forbidden`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Past a rate limit (`rate_limited`): every answer of a user route carries `RateLimit-Policy` (`"user";q=100;w=10`: a burst over its window) and `RateLimit` (`"user";r=98;t=1`) of the IETF httpapi draft */
            429: {
                headers: {
                    /** @description Its standing: remaining `r`, seconds `t` until it is whole again */
                    RateLimit?: string;
                    /** @description The budget nearest its end: name, quota `q` per window `w` seconds */
                    "RateLimit-Policy"?: string;
                    /** @description Seconds until a request passes again */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    put_tenant_notification_defaults_by_category: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description A category of the configured job types */
                category: string;
            };
            cookie?: never;
        };
        /** @description Channels to set: `in_app`, `email` and (where offered) `push`, each `true` (or `"instant"`), `false` (or `"off"`), `email` also `"digest"` (for users who set a digest time), or `null`: the configuration's again. E.g. `{"email": "digest", "push": false}` */
        requestBody: {
            content: {
                "application/json": Record<string, unknown>;
            };
        };
        responses: {
            /** @description The category as it now stands by default */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CategoryView"];
                };
            };
            /** @description A body that is not a JSON object (`bad_request`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not a tenant admin's token (`forbidden`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description An unknown category or channel, a value that is not a setting, turning off a required category, or a digest for another channel than email or for a required category (`invalid_preference`) */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Past a rate limit (`rate_limited`): every answer of a user route carries `RateLimit-Policy` (`"user";q=100;w=10`: a burst over its window) and `RateLimit` (`"user";r=98;t=1`) of the IETF httpapi draft */
            429: {
                headers: {
                    /** @description Its standing: remaining `r`, seconds `t` until it is whole again */
                    RateLimit?: string;
                    /** @description The budget nearest its end: name, quota `q` per window `w` seconds */
                    "RateLimit-Policy"?: string;
                    /** @description Seconds until a request passes again */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    list_for_tenant_admin: {
        parameters: {
            query?: {
                /** @description Only this user's */
                user?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description `schedules`: each a schedule with its `tenant` and `user` */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": Record<string, unknown>;
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not a tenant admin's token (`forbidden`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Past a rate limit (`rate_limited`): every answer of a user route carries `RateLimit-Policy` (`"user";q=100;w=10`: a burst over its window) and `RateLimit` (`"user";r=98;t=1`) of the IETF httpapi draft */
            429: {
                headers: {
                    /** @description Its standing: remaining `r`, seconds `t` until it is whole again */
                    RateLimit?: string;
                    /** @description The budget nearest its end: name, quota `q` per window `w` seconds */
                    "RateLimit-Policy"?: string;
                    /** @description Seconds until a request passes again */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    delete_for_tenant_admin: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The schedule's id */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not a tenant admin's token (`forbidden`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No such schedule in the admin's tenant (`not_found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Past a rate limit (`rate_limited`): every answer of a user route carries `RateLimit-Policy` (`"user";q=100;w=10`: a burst over its window) and `RateLimit` (`"user";r=98;t=1`) of the IETF httpapi draft */
            429: {
                headers: {
                    /** @description Its standing: remaining `r`, seconds `t` until it is whole again */
                    RateLimit?: string;
                    /** @description The budget nearest its end: name, quota `q` per window `w` seconds */
                    "RateLimit-Policy"?: string;
                    /** @description Seconds until a request passes again */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    pause_for_tenant_admin: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The schedule's id */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The schedule, paused */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ManagedScheduleView"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not a tenant admin's token (`forbidden`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No such schedule in the admin's tenant (`not_found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Past a rate limit (`rate_limited`): every answer of a user route carries `RateLimit-Policy` (`"user";q=100;w=10`: a burst over its window) and `RateLimit` (`"user";r=98;t=1`) of the IETF httpapi draft */
            429: {
                headers: {
                    /** @description Its standing: remaining `r`, seconds `t` until it is whole again */
                    RateLimit?: string;
                    /** @description The budget nearest its end: name, quota `q` per window `w` seconds */
                    "RateLimit-Policy"?: string;
                    /** @description Seconds until a request passes again */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    preview_for_tenant_admin: {
        parameters: {
            query: {
                /** @description job_completed, job_failed, batch_completed or digest */
                kind: string;
                /** @description A shipped locale (`en`, `fr`); the admin's language when absent */
                locale?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description `{from, subject, text, html}`, rendered in the tenant's branding */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": Record<string, unknown>;
                };
            };
            /** @description An unknown kind or locale (`bad_request`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not a tenant admin's token (`forbidden`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description errand sends no email here (`email_not_enabled`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Past a rate limit (`rate_limited`): every answer of a user route carries `RateLimit-Policy` (`"user";q=100;w=10`: a burst over its window) and `RateLimit` (`"user";r=98;t=1`) of the IETF httpapi draft */
            429: {
                headers: {
                    /** @description Its standing: remaining `r`, seconds `t` until it is whole again */
                    RateLimit?: string;
                    /** @description The budget nearest its end: name, quota `q` per window `w` seconds */
                    "RateLimit-Policy"?: string;
                    /** @description Seconds until a request passes again */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    get_unsubscribe_by_token: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description From an email's List-Unsubscribe link: the only authorisation */
                token: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page asking to confirm, with a button that POSTs; nothing changes */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/html": unknown;
                };
            };
            /** @description A tampered or foreign link: a page */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/html": unknown;
                };
            };
        };
    };
    post_unsubscribe_by_token: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description From an email's List-Unsubscribe link: the only authorisation */
                token: string;
            };
            cookie?: never;
        };
        /** @description `List-Unsubscribe=One-Click` (RFC 8058), or nothing: not read */
        requestBody: {
            content: {
                "application/x-www-form-urlencoded": string;
            };
        };
        responses: {
            /** @description Unsubscribed (again, if it was already): a page */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/html": unknown;
                };
            };
            /** @description A tampered or foreign link: a page */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/html": unknown;
                };
            };
            /** @description A required category, which cannot be turned off: a page */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/html": unknown;
                };
            };
        };
    };
    get_webhooks: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The tenant's endpoints */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["EndpointList"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not a tenant admin's token (`forbidden`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Past a rate limit (`rate_limited`): every answer of a user route carries `RateLimit-Policy` (`"user";q=100;w=10`: a burst over its window) and `RateLimit` (`"user";r=98;t=1`) of the IETF httpapi draft */
            429: {
                headers: {
                    /** @description Its standing: remaining `r`, seconds `t` until it is whole again */
                    RateLimit?: string;
                    /** @description The budget nearest its end: name, quota `q` per window `w` seconds */
                    "RateLimit-Policy"?: string;
                    /** @description Seconds until a request passes again */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    register: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description `url` (HTTPS, a public address) and `events`: any of `job.completed`, `job.failed`, `job.cancelled`, `type.paused` */
        requestBody: {
            content: {
                "application/json": Record<string, unknown>;
            };
        };
        responses: {
            /** @description The endpoint, with its secret: shown only this once */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CreatedEndpoint"];
                };
            };
            /** @description A body that is not such an object (`bad_request`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not a tenant admin's token (`forbidden`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description A URL errand may not call, an unknown or missing event, or the tenant's most endpoints already (`invalid_webhook`) */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Past a rate limit (`rate_limited`): every answer of a user route carries `RateLimit-Policy` (`"user";q=100;w=10`: a burst over its window) and `RateLimit` (`"user";r=98;t=1`) of the IETF httpapi draft */
            429: {
                headers: {
                    /** @description Its standing: remaining `r`, seconds `t` until it is whole again */
                    RateLimit?: string;
                    /** @description The budget nearest its end: name, quota `q` per window `w` seconds */
                    "RateLimit-Policy"?: string;
                    /** @description Seconds until a request passes again */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    remove: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The endpoint's id */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Removed: it hears of nothing more */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not a tenant admin's token (`forbidden`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No such endpoint of this tenant (`not_found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Past a rate limit (`rate_limited`): every answer of a user route carries `RateLimit-Policy` (`"user";q=100;w=10`: a burst over its window) and `RateLimit` (`"user";r=98;t=1`) of the IETF httpapi draft */
            429: {
                headers: {
                    /** @description Its standing: remaining `r`, seconds `t` until it is whole again */
                    RateLimit?: string;
                    /** @description The budget nearest its end: name, quota `q` per window `w` seconds */
                    "RateLimit-Policy"?: string;
                    /** @description Seconds until a request passes again */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    deliveries: {
        parameters: {
            query?: {
                /** @description `next_cursor` of the previous page */
                cursor?: string;
                /** @description Deliveries per page (default 20) */
                limit?: number;
            };
            header?: never;
            path: {
                /** @description The endpoint's id */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of the endpoint's deliveries */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DeliveryPage"];
                };
            };
            /** @description Bad limit or cursor (`bad_request`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not a tenant admin's token (`forbidden`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Past a rate limit (`rate_limited`): every answer of a user route carries `RateLimit-Policy` (`"user";q=100;w=10`: a burst over its window) and `RateLimit` (`"user";r=98;t=1`) of the IETF httpapi draft */
            429: {
                headers: {
                    /** @description Its standing: remaining `r`, seconds `t` until it is whole again */
                    RateLimit?: string;
                    /** @description The budget nearest its end: name, quota `q` per window `w` seconds */
                    "RateLimit-Policy"?: string;
                    /** @description Seconds until a request passes again */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    redeliver: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The delivery's id (its webhook-id) */
                delivery: string;
                /** @description The endpoint's id */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The delivery, due now (or already on its way) */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DeliveryView"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not a tenant admin's token (`forbidden`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No such delivery of this tenant's endpoint (`not_found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description This delivery was sent again within `webhooks.redeliver_cooldown` (`redelivered_too_soon`), or past a rate limit (`rate_limited`) */
            429: {
                headers: {
                    /** @description Seconds until it may be sent again */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    get_webhooks_preferences: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description One entry per category of the configured job types, in name order */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookPreferencesView"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not a tenant admin (`forbidden`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Past a rate limit (`rate_limited`): every answer of a user route carries `RateLimit-Policy` (`"user";q=100;w=10`: a burst over its window) and `RateLimit` (`"user";r=98;t=1`) of the IETF httpapi draft */
            429: {
                headers: {
                    /** @description Its standing: remaining `r`, seconds `t` until it is whole again */
                    RateLimit?: string;
                    /** @description The budget nearest its end: name, quota `q` per window `w` seconds */
                    "RateLimit-Policy"?: string;
                    /** @description Seconds until a request passes again */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    put_webhooks_preferences_by_category: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description A category of the configured job types */
                category: string;
            };
            cookie?: never;
        };
        /** @description `{"webhook": true}` or `{"webhook": false}` */
        requestBody: {
            content: {
                "application/json": Record<string, unknown>;
            };
        };
        responses: {
            /** @description The category as it now stands */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookCategoryView"];
                };
            };
            /** @description A body that is not a JSON object (`bad_request`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not a tenant admin (`forbidden`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description An unknown category or channel, a value that is not a boolean, or turning off a required category (`invalid_preference`) */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Past a rate limit (`rate_limited`): every answer of a user route carries `RateLimit-Policy` (`"user";q=100;w=10`: a burst over its window) and `RateLimit` (`"user";r=98;t=1`) of the IETF httpapi draft */
            429: {
                headers: {
                    /** @description Its standing: remaining `r`, seconds `t` until it is whole again */
                    RateLimit?: string;
                    /** @description The budget nearest its end: name, quota `q` per window `w` seconds */
                    "RateLimit-Policy"?: string;
                    /** @description Seconds until a request passes again */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    claim: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ClaimBody"];
            };
        };
        responses: {
            /** @description The jobs leased (none if nothing came in time) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Claimed"];
                };
            };
            /** @description A bad body, or a type the token does not allow (`bad_request`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not a worker token (`forbidden`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    checkpoint: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The job's id */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CheckpointBody"];
            };
        };
        responses: {
            /** @description Recorded */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description A malformed body, or a checkpoint holding NUL (`bad_request`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not a worker token (`forbidden`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The lease is no longer yours (`lease_lost`): stop, and change nothing */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Body over 64 KiB (`payload_too_large`) */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    complete: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The job's id */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CompleteBody"];
            };
        };
        responses: {
            /** @description Recorded (or recorded before, for this lease) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Ended"];
                };
            };
            /** @description A bad body (`bad_request`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not a worker token (`forbidden`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The lease is no longer yours (`lease_lost`): stop, and change nothing */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    fail: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The job's id */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["FailBody"];
            };
        };
        responses: {
            /** @description Recorded (or recorded before, for this lease) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Ended"];
                };
            };
            /** @description A bad body (`bad_request`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not a worker token (`forbidden`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The lease is no longer yours (`lease_lost`): stop, and change nothing */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    heartbeat: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The job's id */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["Heartbeat"];
            };
        };
        responses: {
            /** @description Still yours */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LeaseRenewed"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not a worker token (`forbidden`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The lease is no longer yours (`lease_lost`): stop, and change nothing */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    logs: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The job's id */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["LogsBody"];
            };
        };
        responses: {
            /** @description Recorded (past the attempt's cap: dropped); `409` `lease_lost` when the lease is neither the running attempt's nor the one it ended with */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description No lines or more than 100, an unknown level, a message holding NUL, or a bad time (`bad_request`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not a worker token (`forbidden`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The lease is no longer yours (`lease_lost`): stop, and change nothing */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Body over 64 KiB (`payload_too_large`) */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    progress: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The job's id */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ProgressBody"];
            };
        };
        responses: {
            /** @description Recorded */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not a worker token (`forbidden`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The lease is no longer yours (`lease_lost`): stop, and change nothing */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    upload: {
        parameters: {
            query: {
                /** @description What a download is saved as, e.g. `invoice-42.pdf` */
                file_name: string;
                /** @description The attempt's lease */
                lease_id: string;
            };
            header?: never;
            path: {
                /** @description The job's id */
                id: string;
            };
            cookie?: never;
        };
        /** @description The file */
        requestBody: {
            content: {
                "application/octet-stream": number[];
            };
        };
        responses: {
            /** @description Stored; the job's result once it completes */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": Record<string, unknown>;
                };
            };
            /** @description A bad query, e.g. a `file_name` with a control character (`bad_request`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not a worker token (`forbidden`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The lease is no longer yours (`lease_lost`): stop, and change nothing */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Over `[storage] max_upload_bytes` (`payload_too_large`; nothing is kept) */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    upload_url: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The job's id */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["UploadUrlBody"];
            };
        };
        responses: {
            /** @description Where to PUT the file */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["UploadUrl"];
                };
            };
            /** @description A bad body, or not an S3 deployment (`bad_request`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid token (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not a worker token (`forbidden`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The lease is no longer yours (`lease_lost`): stop, and change nothing */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Try again (`unavailable`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
}
