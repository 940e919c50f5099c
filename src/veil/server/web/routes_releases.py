"""Routes of releases: review and publication, the catalogue, downloads, harm guidance."""

from __future__ import annotations

import re

from fastapi.responses import FileResponse, HTMLResponse, Response, StreamingResponse
from sqlalchemy import select

from veil.release.guidance import HARM_QUESTIONS, harm_tier
from veil.server import budget, releases
from veil.server.access import (
    published_release,
    release_for_review,
)
from veil.server.accounts import event
from veil.server.attack_review import attack_view
from veil.server.errors import NotFound
from veil.server.models import (
    Release,
)
from veil.server.web.core import Ctx, Done, Page

__all__ = [
    "catalogue",
    "catalogue_item",
    "download",
    "download_manifest",
    "harm",
    "release_action",
    "release_detail",
    "release_report",
]

_META_CSP = re.compile(
    r'<meta http-equiv="Content-Security-Policy" content="([^"]*)"', re.IGNORECASE
)
_REPORT_CSP_EXTRA = "; frame-ancestors 'self'; base-uri 'none'; form-action 'none'"


# ---------------------------------------------------------------------- releases


def release_detail(ctx: Ctx, release_id: int) -> Page:
    release, owner = release_for_review(ctx.db, ctx.user, int(release_id))
    event(ctx.db, ctx.user, "release.view", "release", release.id)
    policy = budget.get_policy(ctx.db)
    return Page(
        "release.html",
        {
            "release": releases.release_view(ctx.db, release, public=False),
            "owner": owner,
            "manifest": release.manifest,
            "four_eyes": policy.four_eyes,
            # Custodian-side (measured on the raw records): this page's viewers only.
            "attacks": attack_view(releases.attack_results(ctx.db, ctx.config, release), policy),
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
    size = int(rows) if rows.isdigit() and len(rows) <= 12 and int(rows) > 0 else None
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
