"""The platform's routes: each a page and an API call (see :mod:`veil.server.web.core`)."""

from __future__ import annotations

import re
from typing import Any

from fastapi import FastAPI
from fastapi.responses import FileResponse, HTMLResponse, Response, StreamingResponse
from sqlalchemy import select

from veil.release.guidance import HARM_QUESTIONS, HARM_TIERS, default_delta, harm_tier
from veil.server import accounts, budget, datasets, jobs, plans, releases
from veil.server.access import (
    dataset_of,
    job_of,
    plan_of,
    published_release,
    release_for_review,
    require_role,
    version_of,
)
from veil.server.accounts import event
from veil.server.audit import verify_audit
from veil.server.errors import InputError, NotFound
from veil.server.models import (
    ROLES,
    ApiToken,
    AuditEntry,
    Dataset,
    Job,
    Plan,
    PlanVersion,
    Release,
    User,
)
from veil.server.web.core import COOKIE, PRE_COOKIE, Ctx, Done, Page, register

__all__ = ["add_routes"]

_META_CSP = re.compile(
    r'<meta http-equiv="Content-Security-Policy" content="([^"]*)"', re.IGNORECASE
)
_REPORT_CSP_EXTRA = "; frame-ancestors 'self'; base-uri 'none'; form-action 'none'"


def _int(ctx: Ctx, name: str) -> int:
    raw = ctx.fields.get(name)
    try:
        return int(str(raw))
    except (TypeError, ValueError):
        raise InputError(f"{name}: must be a whole number, got {raw!r}", field=name) from None


# ----------------------------------------------------------------- home, login


def home(ctx: Ctx) -> Page | Done:
    if ctx.who is None:
        return Done("/login", {"signed_in": False})
    role = ctx.user.role
    data: dict[str, Any] = {"role": role}
    reviewed = ctx.fields.get("reviewed")
    if role == "curator" and isinstance(reviewed, str) and reviewed.isdigit():
        data["reviewed"] = _reviewed(ctx, int(reviewed))
    if role == "curator":
        data["datasets"] = [
            {"id": d.id, "name": d.name, "custody": d.custody}
            for d in ctx.db.scalars(select(Dataset).where(Dataset.owner_id == ctx.user.user.id))
        ]
        data["reviews"] = [
            releases.release_view(ctx.db, r, public=False)
            for r in ctx.db.scalars(select(Release).where(Release.status == "awaiting_approval"))
            if r.requested_by != ctx.user.user.id
        ]
    return Page("home.html", data)


def _reviewed(ctx: Ctx, release_id: int) -> dict[str, Any] | None:
    """What became of a release this curator approved or rejected (None otherwise)."""
    release = ctx.db.get(Release, release_id)
    if release is None or ctx.user.user.id not in (release.approved_by, release.requested_by):
        return None
    return {"id": release.id, "title": release.title, "status": release.status}


def login_form(ctx: Ctx) -> Response:
    from veil.server.security import new_token

    token = new_token()
    env = ctx.request.app.state.templates
    html = env.get_template("login.html").render(
        pre=token, who=None, csrf=None, custody={}, error=None
    )
    response = HTMLResponse(html)
    response.set_cookie(
        PRE_COOKIE,
        token,
        path="/",
        secure=ctx.config.secure_cookies,
        httponly=True,
        samesite="strict",
        max_age=3600,
    )
    return response


def login(ctx: Ctx) -> Page | Done:
    # The form's token and the request's origin were checked by the gate.
    client = ctx.request.client.host if ctx.request.client else "unknown"
    previous = accounts.session_identity(ctx.db, ctx.request.cookies.get(COOKIE))
    if previous is not None:
        accounts.logout(ctx.db, previous)
    try:
        who, cookie = accounts.login(
            ctx.db,
            ctx.config,
            str(ctx.fields.get("username") or ""),
            str(ctx.fields.get("password") or ""),
            client,
        )
    except InputError as exc:
        # The failure is recorded (rate limits, audit): commit it, refuse the login.
        ctx.db.commit()
        return Page(
            "login.html",
            {
                "error": {"field": exc.field, "message": exc.message},
                "pre": ctx.request.cookies.get(PRE_COOKIE),
            },
            status=exc.status,
        )
    except Exception as exc:
        ctx.db.commit()
        raise exc
    return Done(
        "/", {"username": who.name, "role": who.role}, cookies={COOKIE: cookie, PRE_COOKIE: None}
    )


def logout(ctx: Ctx) -> Done:
    accounts.logout(ctx.db, ctx.user)
    return Done("/login", {"signed_out": True}, cookies={COOKIE: None})


def standalone(ctx: Ctx) -> Done:
    state = ctx.request.app.state
    from veil.server.security import same

    token = getattr(state, "standalone_token", None)
    if not ctx.config.standalone or not same(token, str(ctx.fields.get("token") or "")):
        raise NotFound("token: no such stand-alone link (it works once)", field="token")
    state.standalone_token = None
    user = ctx.db.scalar(select(User).where(User.username == state.standalone_user))
    assert user is not None
    from datetime import timedelta

    from veil.server.models import Session
    from veil.server.security import digest, new_token

    cookie = new_token()
    session = Session(
        id=digest(cookie),
        user_id=user.id,
        csrf_token=new_token(),
        created_at=accounts.now(),
        expires_at=accounts.now() + timedelta(minutes=ctx.config.session_minutes),
    )
    ctx.db.add(session)
    event(
        ctx.db,
        accounts.Identity(user, user.role, session=session),
        "login",
        "user",
        user.id,
        mode="stand-alone",
    )
    return Done("/", {}, cookies={COOKIE: cookie})


# ---------------------------------------------------------------- account, admin


def me(ctx: Ctx) -> Page:
    return Page(
        "home.html", {"username": ctx.user.name, "role": ctx.user.role, "csrf_token": ctx.user.csrf}
    )


def account(ctx: Ctx) -> Page:
    tokens = ctx.db.scalars(select(ApiToken).where(ApiToken.user_id == ctx.user.user.id)).all()
    return Page(
        "account.html",
        {
            "username": ctx.user.name,
            "role": ctx.user.role,
            "tokens": [
                {
                    "id": t.id,
                    "name": t.name,
                    "role": t.role,
                    "revoked": t.revoked,
                    "created_at": t.created_at.isoformat(),
                }
                for t in tokens
            ],
            "new_token": None,
        },
    )


def new_token(ctx: Ctx) -> Page:
    token = accounts.create_token(ctx.db, ctx.user, str(ctx.fields.get("name") or ""))
    page = account(ctx)
    page.data["new_token"] = token
    page.status = 201
    return page


def revoke_token(ctx: Ctx, token_id: int) -> Done:
    accounts.revoke_token(ctx.db, ctx.user, int(token_id))
    return Done("/account", {"revoked": int(token_id)})


def change_password(ctx: Ctx) -> Done:
    accounts.change_password(
        ctx.db,
        ctx.user,
        str(ctx.fields.get("current_password") or ""),
        str(ctx.fields.get("new_password") or ""),
    )
    return Done("/account", {"changed": True})


def users(ctx: Ctx) -> Page:
    require_role(ctx.user, "admin")
    rows = ctx.db.scalars(select(User).order_by(User.id)).all()
    return Page(
        "users.html",
        {
            "users": [
                {
                    "id": u.id,
                    "username": u.username,
                    "role": u.role,
                    "active": u.active,
                    "locked": u.locked_until is not None
                    and accounts._aware(u.locked_until) > accounts.now(),
                }
                for u in rows
            ],
            "roles": ROLES,
        },
    )


def add_user(ctx: Ctx) -> Done:
    user = accounts.create_user(
        ctx.db,
        ctx.user,
        str(ctx.fields.get("username") or ""),
        str(ctx.fields.get("role") or ""),
        str(ctx.fields.get("password") or ""),
    )
    return Done("/admin/users", {"id": user.id, "username": user.username, "role": user.role}, 201)


def update_user(ctx: Ctx, user_id: int) -> Done:
    user = accounts.admin_update(
        ctx.db, ctx.user, int(user_id), str(ctx.fields.get("action") or "")
    )
    return Done("/admin/users", {"id": user.id, "active": user.active})


def audit_log(ctx: Ctx) -> Page:
    require_role(ctx.user, "admin")
    report = verify_audit(ctx.db)
    rows = ctx.db.scalars(select(AuditEntry).order_by(AuditEntry.seq.desc()).limit(200)).all()
    return Page(
        "audit.html",
        {
            "ok": report.ok,
            "problems": report.problems,
            "entries": report.entries,
            "head": report.head,
            "log": [
                {
                    "seq": e.seq,
                    "at": e.at,
                    "actor": e.actor,
                    "role": e.role,
                    "action": e.action,
                    "object": f"{e.object_type} {e.object_id}".strip(),
                    "detail": e.detail,
                }
                for e in rows
            ],
        },
    )


# ------------------------------------------------------------------------ policy


def policy(ctx: Ctx) -> Page:
    require_role(ctx.user, "operator")
    return Page(
        "policy.html",
        {"policy": budget.policy_view(budget.get_policy(ctx.db)), "methods": budget.METHODS},
    )


def set_policy(ctx: Ctx) -> Done:
    row = budget.update_policy(ctx.db, ctx.user, ctx.fields)
    return Done("/policy", {"policy": budget.policy_view(row)})


# ---------------------------------------------------------------------- datasets


def dataset_list(ctx: Ctx) -> Page:
    require_role(ctx.user, "curator")
    rows = ctx.db.scalars(select(Dataset).where(Dataset.owner_id == ctx.user.user.id)).all()
    return Page(
        "datasets.html",
        {
            "datasets": [
                {
                    "id": d.id,
                    "name": d.name,
                    "custody": d.custody,
                    "rows": d.profile.get("rows"),
                    "created_at": d.created_at.isoformat(),
                }
                for d in rows
            ]
        },
    )


def upload_form(ctx: Ctx) -> Page:
    require_role(ctx.user, "curator")
    return Page("upload.html", {"max_bytes": ctx.config.max_upload_bytes})


def _profile_job(ctx: Ctx, dataset: Dataset) -> dict[str, Any] | None:
    job = ctx.db.scalar(
        select(Job)
        .where(Job.dataset_id == dataset.id, Job.kind == "profile")
        .order_by(Job.id.desc())
    )
    return None if job is None else jobs.job_view(job)


def _dataset_page(ctx: Ctx, dataset: Dataset) -> dict[str, Any]:
    row = budget.get_policy(ctx.db)
    ledger = budget.dataset_ledger(ctx.db, dataset, row)
    plan_rows = ctx.db.scalars(select(Plan).where(Plan.dataset_id == dataset.id)).all()
    release_rows = ctx.db.scalars(select(Release).where(Release.dataset_id == dataset.id)).all()
    return {
        "dataset": datasets.dataset_view(dataset),
        "profile_job": _profile_job(ctx, dataset),
        "ledger": ledger.to_dict(),
        "plans": [{"id": p.id, "name": p.name} for p in plan_rows],
        "releases": [releases.release_view(ctx.db, r, public=False) for r in release_rows],
    }


def dataset_detail(ctx: Ctx, dataset_id: int) -> Page:
    dataset = dataset_of(ctx.db, ctx.user, int(dataset_id))
    event(ctx.db, ctx.user, "dataset.view", "dataset", dataset.id)
    return Page("dataset.html", _dataset_page(ctx, dataset))


def dataset_profile(ctx: Ctx, dataset_id: int) -> Page:
    """The profile and risk summary (the part of the dataset page that polls while pending)."""
    dataset = dataset_of(ctx.db, ctx.user, int(dataset_id))
    return Page(
        "dataset_profile.html",
        {"dataset": datasets.dataset_view(dataset), "profile_job": _profile_job(ctx, dataset)},
    )


def dataset_retention(ctx: Ctx, dataset_id: int) -> Done:
    dataset = dataset_of(ctx.db, ctx.user, int(dataset_id))
    form = datasets.DatasetForm(
        dataset.name, ctx.fields.get("retention_days"), ctx.fields.get("delete_after_publish")
    )
    datasets.set_retention(ctx.db, ctx.user, dataset, form)
    return Done(
        f"/datasets/{dataset.id}",
        {"retention_days": form.retention_days, "delete_after_publish": form.delete_after_publish},
    )


def dataset_delete(ctx: Ctx, dataset_id: int) -> Done:
    dataset = dataset_of(ctx.db, ctx.user, int(dataset_id))
    if ctx.fields.get("confirm") != dataset.name:
        raise InputError("confirm: type the dataset's name to delete its raw data", field="confirm")
    datasets.delete_raw(ctx.db, ctx.config, ctx.user, dataset, "deleted by its curator")
    return Done(f"/datasets/{dataset.id}", {"custody": dataset.custody})


# ------------------------------------------------------------------------- plans


def plan_form(ctx: Ctx, dataset_id: int) -> Page:
    dataset = dataset_of(ctx.db, ctx.user, int(dataset_id))
    datasets.require_profile(dataset)
    rows = dataset.profile.get("rows")
    suggested = {r["column"]: r["role"] for r in dataset.risk.get("roles", [])}
    return Page(
        "plan_form.html",
        {
            "dataset": datasets.dataset_view(dataset),
            "tiers": [
                {"level": t.level, "name": t.name, "harm": t.harm, **t.defaults(rows)}
                for t in HARM_TIERS
            ],
            "questions": [{"key": k, "question": q, "tier": t} for k, q, t in HARM_QUESTIONS],
            "methods": plans.FORM_METHODS,
            "roles": plans.FORM_ROLES,
            "suggested": suggested,
            "default_delta": default_delta(rows),
        },
    )


def _plan_text(ctx: Ctx, dataset: Dataset) -> str:
    datasets.require_profile(dataset)
    text = ctx.fields.get("text")
    if text:
        return str(text)
    return plans.form_plan(dataset.profile, ctx.fields)


def _refused_plan(text: str, errors: list[dict[str, str]]) -> Page:
    """A refused plan: every error on the page; the API also gives the first as ``error``."""
    first = errors[0] if errors else {"field": "plan", "message": "plan: refused"}
    return Page(
        "plan_preview.html",
        {
            "text": text,
            "errors": errors,
            "expected": [],
            "ledger_text": "",
            "error": {**first, "status": 422},
        },
        status=422,
    )


def plan_preview(ctx: Ctx, dataset_id: int) -> Page:
    """The expected error of each column and the ledger of the form's plan (nothing stored)."""
    dataset = dataset_of(ctx.db, ctx.user, int(dataset_id))
    text = _plan_text(ctx, dataset)
    checked = plans.check_plan(ctx.db, ctx.config, dataset, plans.parse_text(text))
    if not checked.ok:
        return _refused_plan(text, checked.errors)
    return Page(
        "plan_preview.html",
        {
            "text": text,
            "errors": [],
            "expected": checked.expected,
            "ledger_text": checked.ledger_text,
        },
    )


def plan_create(ctx: Ctx, dataset_id: int) -> Page | Done:
    dataset = dataset_of(ctx.db, ctx.user, int(dataset_id))
    text = _plan_text(ctx, dataset)
    plan = plans.create_plan(ctx.db, ctx.user, dataset, ctx.fields.get("name"))
    version, checked = plans.new_version(
        ctx.db, ctx.config, ctx.user, plan, dataset, text, ctx.fields.get("note")
    )
    if version is None:
        ctx.db.rollback()
        return _refused_plan(text, checked.errors)
    return Done(f"/plans/{plan.id}", {"plan": plan.id, "version": version.number}, 201)


def _versions(ctx: Ctx, plan: Plan) -> list[PlanVersion]:
    return list(
        ctx.db.scalars(
            select(PlanVersion).where(PlanVersion.plan_id == plan.id).order_by(PlanVersion.number)
        )
    )


def _version_view(v: PlanVersion) -> dict[str, Any]:
    return {
        "number": v.number,
        "text": v.text,
        "note": v.note,
        "created_at": v.created_at.isoformat(),
        "ledger_text": v.ledger.get("text", ""),
        "expected": v.ledger.get("expected", []),
        "totals": v.ledger.get("ledger", {}).get("totals"),
    }


def plan_detail(ctx: Ctx, plan_id: int) -> Page:
    plan = plan_of(ctx.db, ctx.user, int(plan_id))
    versions = _versions(ctx, plan)
    job_rows = ctx.db.scalars(
        select(Job).where(Job.plan_version_id.in_([v.id for v in versions])).order_by(Job.id.desc())
    ).all()
    numbers = {v.id: v.number for v in versions}
    return Page(
        "plan.html",
        {
            "plan": {"id": plan.id, "name": plan.name, "dataset_id": plan.dataset_id},
            "versions": [_version_view(v) for v in versions],
            "latest": _version_view(versions[-1]) if versions else None,
            "jobs": [
                {**jobs.job_view(j), "version": numbers.get(j.plan_version_id or 0)}
                for j in job_rows
            ],
        },
    )


def plan_edit(ctx: Ctx, plan_id: int) -> Page | Done:
    plan = plan_of(ctx.db, ctx.user, int(plan_id))
    dataset = dataset_of(ctx.db, ctx.user, plan.dataset_id)
    text = str(ctx.fields.get("text") or "")
    version, checked = plans.new_version(
        ctx.db, ctx.config, ctx.user, plan, dataset, text, ctx.fields.get("note")
    )
    if version is None:
        return _refused_plan(text, checked.errors)
    return Done(f"/plans/{plan.id}", {"plan": plan.id, "version": version.number}, 201)


def plan_compare(ctx: Ctx, plan_id: int) -> Page:
    plan = plan_of(ctx.db, ctx.user, int(plan_id))
    a = version_of(ctx.db, ctx.user, plan.id, _int(ctx, "a"))
    b = version_of(ctx.db, ctx.user, plan.id, _int(ctx, "b"))

    def latest_release(v: PlanVersion) -> int | None:
        rel = ctx.db.scalar(
            select(Release).where(Release.plan_version_id == v.id).order_by(Release.id.desc())
        )
        return None if rel is None else rel.id

    return Page(
        "compare.html",
        {
            "plan": {"id": plan.id, "name": plan.name},
            "a": {**_version_view(a), "release": latest_release(a)},
            "b": {**_version_view(b), "release": latest_release(b)},
            "diff": plans.diff_versions(a, b),
        },
    )


def queue_job(ctx: Ctx, plan_id: int, number: int) -> Done:
    version = version_of(ctx.db, ctx.user, int(plan_id), int(number))
    plan = plan_of(ctx.db, ctx.user, int(plan_id))
    dataset = dataset_of(ctx.db, ctx.user, plan.dataset_id)
    job = jobs.enqueue(ctx.db, ctx.config, ctx.user, version, dataset, ctx.fields.get("kind"))
    return Done(f"/jobs/{job.id}", jobs.job_view(job), 201)


# -------------------------------------------------------------------------- jobs


def job_detail(ctx: Ctx, job_id: int) -> Page:
    job = job_of(ctx.db, ctx.user, int(job_id))
    release = ctx.db.scalar(select(Release).where(Release.job_id == job.id))
    version = None if job.plan_version_id is None else ctx.db.get(PlanVersion, job.plan_version_id)
    return Page(
        "job.html",
        {
            "job": jobs.job_view(job),
            "release": None if release is None else release.id,
            "plan_id": None if version is None else version.plan_id,
            "dataset_id": job.dataset_id,
        },
    )


def job_progress(ctx: Ctx, job_id: int) -> Page:
    job = job_of(ctx.db, ctx.user, int(job_id))
    release = ctx.db.scalar(select(Release).where(Release.job_id == job.id))
    return Page(
        "job_progress.html",
        {"job": jobs.job_view(job), "release": None if release is None else release.id},
    )


def job_cancel(ctx: Ctx, job_id: int) -> Done:
    job = job_of(ctx.db, ctx.user, int(job_id))
    jobs.cancel(ctx.db, ctx.user, job)
    return Done(f"/jobs/{job.id}", jobs.job_view(job))


def job_rerun(ctx: Ctx, job_id: int) -> Done:
    job = job_of(ctx.db, ctx.user, int(job_id))
    new = jobs.rerun(ctx.db, ctx.config, ctx.user, job)
    return Done(f"/jobs/{new.id}", jobs.job_view(new), 201)


# ---------------------------------------------------------------------- releases


def release_detail(ctx: Ctx, release_id: int) -> Page:
    release, owner = release_for_review(ctx.db, ctx.user, int(release_id))
    event(ctx.db, ctx.user, "release.view", "release", release.id)
    return Page(
        "release.html",
        {
            "release": releases.release_view(ctx.db, release, public=False),
            "owner": owner,
            "manifest": release.manifest,
            "four_eyes": budget.get_policy(ctx.db).four_eyes,
        },
    )


def release_report(ctx: Ctx, release_id: int) -> Response:
    release, _ = release_for_review(ctx.db, ctx.user, int(release_id))
    html = releases.report_html(ctx.db, ctx.config, release)
    if html is None:
        raise NotFound(f"report: release {release.id} has no report", field="report")
    event(ctx.db, ctx.user, "report.view", "release", release.id)
    match = _META_CSP.search(html)
    policy = (match.group(1) if match else "default-src 'none'") + _REPORT_CSP_EXTRA
    return HTMLResponse(html, headers={"Content-Security-Policy": policy.replace("&#x27;", "'")})


def release_action(ctx: Ctx, release_id: int, action: str) -> Done:
    release, owner = release_for_review(ctx.db, ctx.user, int(release_id))
    if action == "request-approval":
        releases.request_approval(ctx.db, ctx.user, release)
    elif action == "approve":
        releases.approve(ctx.db, ctx.user, release)
    elif action == "reject":
        releases.reject(ctx.db, ctx.user, release, ctx.fields.get("reason"))
    elif action == "publish":
        releases.publish(ctx.db, ctx.config, ctx.user, release)
    else:
        raise NotFound(f"action: no release action {action!r}", field="action")
    # A reviewer may no longer see a release once it leaves their queue: back to the start.
    where = f"/releases/{release.id}" if owner else "/?reviewed=" + str(release.id)
    return Done(where, releases.release_view(ctx.db, release, public=False))


# --------------------------------------------------------------------- catalogue


def catalogue(ctx: Ctx) -> Page:
    rows = ctx.db.scalars(
        select(Release).where(Release.status == "published").order_by(Release.published_at.desc())
    ).all()
    return Page(
        "catalogue.html",
        {"releases": [releases.release_view(ctx.db, r, public=True) for r in rows]},
    )


def catalogue_item(ctx: Ctx, release_id: int) -> Page:
    release = published_release(ctx.db, ctx.user, int(release_id))
    return Page(
        "catalogue_item.html",
        {
            "release": releases.release_view(ctx.db, release, public=True),
            "manifest": release.manifest,
        },
    )


class _ReleaseFile(FileResponse):
    """A release file read 1 MiB at a time, not 64 KiB: every read is a hop to a thread,
    and those hops queue behind the requests' own under load."""

    chunk_size = 1024 * 1024


def download(ctx: Ctx, release_id: int) -> Response:
    release = published_release(ctx.db, ctx.user, int(release_id))
    path = releases.release_file(ctx.db, ctx.config, release)
    event(ctx.db, ctx.user, "release.download", "release", release.id, file=release.file_name)
    if release.file_format == "parquet" and ctx.fields.get("format") == "csv":
        name = release.file_name.rsplit(".", 1)[0] + ".csv"
        return StreamingResponse(
            releases.csv_export(path),
            media_type="text/csv",
            headers={"Content-Disposition": f'attachment; filename="{name}"'},
        )
    media = "text/csv" if release.file_format == "csv" else "application/octet-stream"
    return _ReleaseFile(path, media_type=media, filename=release.file_name)


def download_manifest(ctx: Ctx, release_id: int) -> Response:
    release = published_release(ctx.db, ctx.user, int(release_id))
    event(ctx.db, ctx.user, "release.download", "release", release.id, file="manifest.json")
    return Response(
        releases.manifest_text(release),
        media_type="application/json",
        headers={"Content-Disposition": 'attachment; filename="manifest.json"'},
    )


def harm(ctx: Ctx) -> Page:
    answers = [k for k, _, _ in HARM_QUESTIONS if ctx.fields.get(k) in ("on", "true", "yes", "1")]
    tier = harm_tier(answers)
    rows = str(ctx.fields.get("rows") or "")
    size = int(rows) if rows.isdigit() and int(rows) > 0 else None
    return Page(
        "harm.html",
        {
            "tier": {
                "level": tier.level,
                "name": tier.name,
                "harm": tier.harm,
                **tier.defaults(size),
            }
        },
    )


def add_routes(app: FastAPI) -> None:
    """Register every route."""
    register(app, "GET", "/", home, public=True, api=False)
    register(app, "GET", "/login", login_form, public=True, api=False)
    register(app, "POST", "/login", login, public=True)
    register(app, "POST", "/logout", logout)
    register(app, "GET", "/standalone", standalone, public=True, api=False)
    register(app, "GET", "/me", me, pages=False)
    register(app, "GET", "/account", account)
    register(app, "POST", "/account/tokens", new_token)
    register(app, "POST", "/account/tokens/{token_id:int}/revoke", revoke_token)
    register(app, "POST", "/account/password", change_password)
    register(app, "GET", "/admin/users", users)
    register(app, "POST", "/admin/users", add_user)
    register(app, "POST", "/admin/users/{user_id:int}", update_user)
    register(app, "GET", "/admin/audit", audit_log)
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
