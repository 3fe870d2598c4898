"""What a worker hands on: a file it uploads becomes the job's result (the
owner downloads the same bytes), and a checkpoint it records survives its
crash, for the next attempt on another worker to resume from."""

from __future__ import annotations

import hashlib
import signal

import httpx


def content(seed: str, size: int) -> bytes:
    """The bytes an adapter's `upload` step sends (README: SHA-256 of "<seed>:<i>", cut to `size`)."""
    blocks = b"".join(hashlib.sha256(f"{seed}:{i}".encode()).digest() for i in range((size + 31) // 32))
    return blocks[:size]


def test_an_uploaded_file_becomes_the_result_and_downloads_as_the_same_bytes(errand, adapter):
    adapter("a")
    size = 600 * 1024 + 7  # more than one chunk, not a round number
    upload = {"do": "upload", "seed": "conformance", "size": size, "file_name": "report-7.pdf"}
    job_id = errand.submit(
        {"steps": [dict(upload, content_type="application/pdf"), {"do": "return", "result": {"pages": 2}}]}
    )

    job = errand.wait_for_end(job_id)
    assert job["status"] == "completed", job
    result = job["result"]
    assert (result["file_name"], result["content_type"], result["size_bytes"], result["pages"]) == (
        "report-7.pdf",
        "application/pdf",
        size,
        2,
    )
    # The owner's way to the file: GET /jobs/{id}/result, a 303 to a fresh signed URL.
    redirect = errand.user.get(f"/jobs/{job_id}/result", follow_redirects=False)
    assert redirect.status_code == 303, redirect.text
    download = httpx.get(redirect.headers["location"], timeout=10)
    assert download.status_code == 200
    assert download.content == content("conformance", size)


def test_a_checkpoint_survives_its_workers_crash_and_the_next_attempt_resumes_from_it(errand, adapter):
    doomed = adapter("doomed")
    saved = {"next_row": 500, "cursor": "abc"}
    job_id = errand.submit(
        {
            "by_attempt": [
                {"steps": [{"do": "checkpoint", "value": saved, "done": 500}, {"do": "die"}]},
                {"steps": []},
            ]
        }
    )
    doomed.wait_for("did", job=job_id, step="checkpoint")
    assert doomed.wait_exit() == -signal.SIGKILL

    survivor = adapter("survivor")
    job = errand.wait_for_end(job_id, timeout=30)
    assert (job["status"], job["attempts"], job["resumed_from"]) == ("completed", 2, 500), job
    assert survivor.wait_for("started", job=job_id)["resumed"] == saved
