"""What a handler's end makes of its job, whatever the language of its worker:
a returned object completes it, a retryable failure is retried, a
permanent one fails it at once, an unexpected error fails it with a generic
message that never carries the error's text."""

from __future__ import annotations

import harness

GENERIC_ERROR = "The job failed because of an unexpected error in its worker."


def test_a_returned_object_becomes_the_result(errand, adapter):
    worker = adapter("a")
    job_id = errand.submit({"steps": [{"do": "return", "result": {"pages": 3, "by": "a"}}]})

    job = errand.wait_for_end(job_id)
    assert (job["status"], job["attempts"], job["result"]) == ("completed", 1, {"pages": 3, "by": "a"}), job
    assert worker.wait_for("started", job=job_id)["attempt"] == 1
    worker.wait_for("returned", job=job_id)


def test_a_retryable_failure_is_retried_and_the_next_attempt_can_complete(errand, adapter):
    worker = adapter("a")
    job_id = errand.submit(
        {"by_attempt": [{"steps": [{"do": "fail", "retryable": True, "message": "busy"}]}, {"steps": []}]}
    )

    job = errand.wait_for_end(job_id)
    assert (job["status"], job["attempts"], job["result"]) == ("completed", 2, {"by": "a", "attempt": 2}), job
    assert [e["attempt"] for e in worker.seen("started", job=job_id)] == [1, 2]
    assert worker.seen("threw", job=job_id) == [
        {"event": "threw", "worker": "a", "job": job_id, "attempt": 1, "kind": "retryable"}
    ]


def test_a_permanent_failure_fails_the_job_at_once_with_its_message(errand, adapter):
    worker = adapter("a")
    job_id = errand.submit({"steps": [{"do": "fail", "retryable": False, "message": "invoice 7 has no lines"}]})

    job = errand.wait_for_end(job_id)
    assert (job["status"], job["attempts"], job["error_message"]) == ("failed", 1, "invoice 7 has no lines"), job
    assert len(worker.seen("started", job=job_id)) == 1


def test_an_unexpected_error_is_retried_and_its_text_never_reaches_the_owner(errand, adapter):
    adapter("a")
    job_id = errand.submit({"steps": [{"do": "crash", "message": "db-internal-7 refused; password=hunter2"}]})

    # The type allows 3 attempts (harness.errand_env).
    job = errand.wait_for_end(job_id)
    assert (job["status"], job["attempts"], job["error_message"]) == ("failed", 3, GENERIC_ERROR), job
    # (The params carry it, as the owner sent them; nothing else may.)
    assert "hunter2" not in str({name: value for name, value in job.items() if name != "params"})


def test_progress_and_log_lines_reach_the_owner_and_the_operators(errand, adapter):
    adapter("a")
    job_id = errand.submit(
        {
            "steps": [
                {"do": "log", "level": "info", "message": "rendering", "fields": {"pages": 3}},
                {"do": "progress", "done": 1, "total": 3, "message": "page 1 of 3"},
                {"do": "sleep", "ms": 1500},
            ]
        }
    )

    # errand writes progress at most once a second: poll for it.
    job = errand.wait_for_job(job_id, lambda job: job["progress"] is not None, what="progress to show")
    assert job["status"] == "processing"
    assert (job["progress"]["done"], job["progress"]["total"], job["progress"]["message"]) == (1, 3, "page 1 of 3")
    assert errand.wait_for_end(job_id)["status"] == "completed"

    def logged() -> list[tuple[str, str, object]] | None:
        [attempt] = errand.admin_job(job_id)["history"]["attempts"]
        lines = [(line["level"], line["message"], line.get("fields")) for line in attempt["logs"]]
        return lines or None

    assert harness.wait_until(logged, what="the log line") == [("info", "rendering", {"pages": 3})]
