"""A worker errand refuses to hand jobs to says so instead of polling forever."""

import pytest

from errand_worker import ApiError


def test_run_raises_when_the_token_may_not_take_the_workers_types(errand, new_worker):
    worker = new_worker()

    @worker.job("export_sales_report")  # the token allows render_invoice only
    def export(job):
        raise AssertionError("never handed out")

    with pytest.raises(ApiError) as refused:
        worker.run()
    assert refused.value.status in (400, 403)


def test_run_raises_on_a_token_errand_did_not_sign(errand):
    from errand_worker import Worker

    worker = Worker(errand.url, "not-a-token", poll_wait=1)

    @worker.job("render_invoice")
    def render(job):
        raise AssertionError("never handed out")

    with pytest.raises(ApiError) as refused:
        worker.run()
    assert refused.value.status == 401
