"""Routes of the curator's work and the operator's policy: datasets, plans, jobs."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from veil.release.guidance import HARM_QUESTIONS, HARM_TIERS, default_delta
from veil.server import budget, datasets, jobs, plans, releases
from veil.server import plan_form as forms
from veil.server.access import (
    dataset_of,
    job_of,
    plan_of,
    require_role,
    version_of,
)
from veil.server.accounts import event
from veil.server.attack_review import ATTACK_LABELS
from veil.server.errors import InputError
from veil.server.models import (
    Dataset,
    Job,
    Plan,
    PlanVersion,
    Release,
)
from veil.server.web.core import Ctx, Done, Page, int_field

__all__ = [
    "dataset_delete",
    "dataset_detail",
    "dataset_list",
    "dataset_profile",
    "dataset_retention",
    "job_cancel",
    "job_detail",
    "job_progress",
    "job_rerun",
    "plan_compare",
    "plan_create",
    "plan_detail",
    "plan_edit",
    "plan_form",
    "plan_preview",
    "policy",
    "queue_job",
    "set_policy",
    "upload_form",
]

# ------------------------------------------------------------------------ policy


def policy(ctx: Ctx) -> Page:
    require_role(ctx.user, "operator")
    return Page(
        "policy.html",
        {
            "policy": budget.policy_view(budget.get_policy(ctx.db)),
            "methods": budget.METHODS,
            "attacks": [{"name": a, "label": ATTACK_LABELS[a]} for a in budget.ATTACK_LIMITS],
            "saved": ctx.fields.get("saved") == "1",
        },
    )


def set_policy(ctx: Ctx) -> Done:
    row = budget.update_policy(ctx.db, ctx.user, ctx.fields)
    return Done("/policy?saved=1", {"policy": budget.policy_view(row)})


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
    return Page(
        "upload.html",
        {
            "max_bytes": ctx.config.max_upload_bytes,
            "max_columns": ctx.config.max_columns,
            "max_cell_chars": ctx.config.max_cell_chars,
            "profile_seconds": ctx.config.profile_seconds,
        },
    )


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
    files = plans.hierarchy_files(ctx.config)
    defaults = forms.form_defaults(dataset.profile, suggested, files)
    sensitive = [c for c, d in defaults.items() if d["role"] == "sensitive"]
    return Page(
        "plan_form.html",
        {
            "dataset": datasets.dataset_view(dataset),
            "tiers": [
                {"level": t.level, "name": t.name, "harm": t.harm, **t.defaults(rows)}
                for t in HARM_TIERS
            ],
            "questions": [{"key": k, "question": q, "tier": t} for k, q, t in HARM_QUESTIONS],
            "methods": forms.FORM_METHODS,
            "roles": forms.FORM_ROLES,
            "hierarchies": [*forms.HIERARCHIES, *files],
            "defaults": defaults,
            "default_k": 5 if any(d["method"] == "generalize" for d in defaults.values()) else "",
            "sensitive": sensitive,
            "default_delta": default_delta(rows),
        },
    )


def _plan_text(ctx: Ctx, dataset: Dataset) -> str:
    datasets.require_profile(dataset)
    text = ctx.fields.get("text")
    if text:
        return str(text)
    return forms.form_plan(dataset.profile, ctx.fields, plans.hierarchy_files(ctx.config))


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
    a = version_of(ctx.db, ctx.user, plan.id, int_field(ctx, "a"))
    b = version_of(ctx.db, ctx.user, plan.id, int_field(ctx, "b"))

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
