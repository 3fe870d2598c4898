"""A file a handler uploads becomes its job's result, downloadable by the owner."""

import os

import httpx


def test_an_uploaded_file_is_the_jobs_result_and_downloads_the_same_bytes(errand, new_worker, run_worker, tmp_path):
    # Larger than one upload chunk, and not text: the bytes must come back as sent.
    content = os.urandom(600 * 1024)
    worker = new_worker()

    @worker.job("render_invoice")
    def render(job):
        path = tmp_path / f"render-{job.id}.bin"
        path.write_bytes(content)
        job.upload(path, content_type="application/pdf", file_name="invoice-42.pdf")
        return {"pages": 2}  # added to the file's metadata

    run_worker(worker)
    job_id = errand.submit({"invoice": 42})

    job = errand.wait_for_end(job_id)
    assert job["status"] == "completed", job
    assert job["result"]["file_name"] == "invoice-42.pdf"
    assert job["result"]["content_type"] == "application/pdf"
    assert job["result"]["size_bytes"] == len(content)
    assert job["result"]["pages"] == 2
    download = httpx.get(job["result_url"], timeout=10)
    assert download.status_code == 200
    assert download.content == content
