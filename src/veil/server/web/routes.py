"""The platform's routes: each a page and an API call (see :mod:`veil.server.web.core`).

The handlers live by concept: :mod:`~veil.server.web.routes_accounts` (start, sign-in,
account, admin), :mod:`~veil.server.web.routes_work` (policy, datasets, plans, jobs)
and :mod:`~veil.server.web.routes_releases` (releases, catalogue).
"""

from __future__ import annotations

from fastapi import FastAPI

from veil.server.web.core import register
from veil.server.web.routes_accounts import (
    account,
    add_user,
    audit_log,
    change_password,
    home,
    login,
    login_form,
    logout,
    me,
    new_token,
    reviewer_list,
    revoke_token,
    set_reviewer,
    standalone,
    update_user,
    users,
)
from veil.server.web.routes_releases import (
    catalogue,
    catalogue_item,
    download,
    download_manifest,
    harm,
    release_action,
    release_detail,
    release_report,
)
from veil.server.web.routes_work import (
    dataset_delete,
    dataset_detail,
    dataset_list,
    dataset_profile,
    dataset_retention,
    job_cancel,
    job_detail,
    job_progress,
    job_rerun,
    plan_compare,
    plan_create,
    plan_detail,
    plan_edit,
    plan_form,
    plan_preview,
    policy,
    queue_job,
    set_policy,
    upload_form,
)

__all__ = ["add_routes"]


def add_routes(app: FastAPI) -> None:
    """Register every route."""
    register(app, "GET", "/", home, public=True, api=False)
    register(app, "GET", "/login", login_form, public=True, api=False)
    register(app, "POST", "/login", login, public=True)
    register(app, "POST", "/logout", logout, one_time=True)
    register(app, "GET", "/standalone", standalone, public=True, api=False)
    register(app, "GET", "/me", me, pages=False, one_time=True)
    register(app, "GET", "/account", account, one_time=True)
    register(app, "POST", "/account/tokens", new_token)
    register(app, "POST", "/account/tokens/{token_id:int}/revoke", revoke_token)
    register(app, "POST", "/account/password", change_password, one_time=True)
    register(app, "GET", "/admin/users", users)
    register(app, "POST", "/admin/users", add_user)
    register(app, "POST", "/admin/users/{user_id:int}", update_user)
    register(app, "GET", "/admin/audit", audit_log)
    register(app, "GET", "/admin/reviewers", reviewer_list)
    register(app, "POST", "/admin/datasets/{dataset_id:int}/reviewers", set_reviewer)
    register(app, "GET", "/policy", policy)
    register(app, "POST", "/policy", set_policy)
    register(app, "GET", "/datasets", dataset_list)
    register(app, "GET", "/datasets/new", upload_form, api=False)
    register(app, "GET", "/datasets/{dataset_id:int}", dataset_detail)
    register(app, "GET", "/datasets/{dataset_id:int}/profile", dataset_profile)
    register(app, "POST", "/datasets/{dataset_id:int}/retention", dataset_retention)
    register(app, "POST", "/datasets/{dataset_id:int}/delete", dataset_delete)
    register(app, "GET", "/datasets/{dataset_id:int}/plans/new", plan_form)
    register(app, "POST", "/datasets/{dataset_id:int}/plans/preview", plan_preview)
    register(app, "POST", "/datasets/{dataset_id:int}/plans", plan_create)
    register(app, "GET", "/plans/{plan_id:int}", plan_detail)
    register(app, "POST", "/plans/{plan_id:int}/versions", plan_edit)
    register(app, "GET", "/plans/{plan_id:int}/compare", plan_compare)
    register(app, "POST", "/plans/{plan_id:int}/versions/{number:int}/jobs", queue_job)
    register(app, "GET", "/jobs/{job_id:int}", job_detail)
    register(app, "GET", "/jobs/{job_id:int}/progress", job_progress)
    register(app, "POST", "/jobs/{job_id:int}/cancel", job_cancel)
    register(app, "POST", "/jobs/{job_id:int}/rerun", job_rerun)
    register(app, "GET", "/releases/{release_id:int}", release_detail)
    register(app, "GET", "/releases/{release_id:int}/report", release_report, api=False)
    register(app, "POST", "/releases/{release_id:int}/{action}", release_action)
    register(app, "GET", "/catalogue", catalogue)
    register(app, "GET", "/catalogue/{release_id:int}", catalogue_item)
    register(app, "GET", "/catalogue/{release_id:int}/download", download)
    register(app, "GET", "/catalogue/{release_id:int}/manifest.json", download_manifest)
    register(app, "GET", "/guidance/harm", harm)
