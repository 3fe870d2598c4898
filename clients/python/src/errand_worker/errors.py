"""The exceptions of errand_worker.

Two kinds live here. A handler *raises* `Retryable` or `Permanent` to say how
its job failed. The worker *raises into* a handler `LeaseLost` or `Cancelled`
(from `Job.progress()`, `Job.checkpoint()`, `Job.upload()` and `Job.check()`)
to tell it to stop: the job is no longer this worker's to finish, so whatever
the handler does next is not sent.
Besides them, `ApiError` and `Unreachable` (calls to errand that failed) and
`WebhookVerificationError` (a webhook delivery that is not errand's).
"""

from __future__ import annotations


class JobFailed(Exception):
    """Base of the failures a handler raises on purpose.

    The message is shown to the job's owner as the job's `error_message`, so
    write it for a person and keep internals out of it.
    """

    #: Whether errand should run the job again (while attempts remain).
    retryable: bool = True

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class Retryable(JobFailed):
    """A failure that may pass: errand runs the job again after its backoff,
    until the type's `max_attempts` is spent."""

    retryable = True


class Permanent(JobFailed):
    """A failure that another attempt cannot fix (bad params, a missing
    record): the job fails at once."""

    retryable = False


class JobInterrupted(Exception):
    """Base of the signals that tell a handler to stop working on its job."""


class LeaseLost(JobInterrupted):
    """errand no longer counts this worker as the job's runner: the lease
    expired and the job was rescued (it may already run elsewhere), or the job
    ended. Stop; nothing more is sent for this attempt."""


class Cancelled(JobInterrupted):
    """The job's owner (or an operator) cancelled it. Stop; errand ends the job
    itself, nothing more is sent for this attempt."""


class ApiError(Exception):
    """errand refused a worker call with an answer that retrying cannot change
    (a 4xx other than `lease_lost`), e.g. a token that may not take a type.

    `status` is the HTTP status, `code` the problem's stable `code` member
    when the body was `application/problem+json`.
    """

    def __init__(self, status: int, code: str | None, detail: str) -> None:
        super().__init__(f"errand answered {status} ({code or 'no code'}): {detail}")
        self.status = status
        self.code = code
        self.detail = detail


class Unreachable(Exception):
    """errand could not be reached, or kept answering 5xx, for as long as the
    call was allowed to retry."""


class WebhookVerificationError(Exception):
    """A webhook delivery whose headers do not prove it errand's: a header is
    missing or malformed, its timestamp is too old or too far ahead, or no
    signature matches the body under the endpoint's secret. Answer it with a
    4xx and do not act on the body."""
