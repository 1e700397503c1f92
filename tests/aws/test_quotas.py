"""AWS's request quotas as data: every operation the viewer may send has one, and the rate
limiter's default budget for each stays within half of AWS's refill rate and bucket."""

from __future__ import annotations

import pytest

from awsview.aws.quotas import SHARE, quota
from awsview.aws.ratelimit import RateLimiter, SharedTokenBucket, shared_dir
from awsview.aws.readonly import READ_OPERATIONS

EVERY_READ = sorted((s, op) for s, ops in READ_OPERATIONS.items() for op in ops)


@pytest.mark.parametrize(("service", "operation"), EVERY_READ)
def test_every_read_operation_has_a_quota(service, operation):
    limit = quota(service, operation)
    assert limit is not None, f"no quota for {service}:{operation}"
    assert limit.refill > 0 and limit.bucket >= 1


def test_an_operation_the_viewer_never_sends_has_no_quota():
    assert quota("sqs", "ReceiveMessage") is None
    assert quota("stepfunctions", "StartExecution") is None


@pytest.mark.parametrize("shared", [False, True])
def test_at_the_defaults_every_budget_is_at_most_half_of_the_quota(shared, tmp_path):
    limiter = RateLimiter()  # the defaults, on AWS (scale 1)
    if shared:  # `awsview serve`: one budget for every session, kept in files
        limiter.share(shared_dir(tmp_path, "account"))
    for service, operation in EVERY_READ:
        limit = quota(service, operation)
        assert limit is not None
        bucket = limiter.bucket(service, operation)
        assert isinstance(bucket, SharedTokenBucket) is shared
        assert bucket.rate <= SHARE * limit.refill, (service, operation)
        assert bucket.capacity <= max(1.0, SHARE * limit.bucket), (service, operation)


@pytest.mark.parametrize("shared", [False, True])
def test_operations_under_one_quota_draw_from_one_budget(shared, tmp_path):
    """Lambda's control-plane reads share one 15/s quota: together, never more than half."""
    limiter = RateLimiter()
    if shared:
        limiter.share(shared_dir(tmp_path, "account"))
    functions = limiter.bucket("lambda", "ListFunctions")
    assert functions is limiter.bucket("lambda", "ListEventSourceMappings")
    assert functions is not limiter.bucket("lambda", "GetFunction")  # a quota of its own
    limit = quota("lambda", "ListFunctions")
    assert limit is not None and functions.rate <= SHARE * limit.refill
