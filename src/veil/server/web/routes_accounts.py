"""Routes of accounts: the start page, signing in and out, one's account, the admin's pages."""

from __future__ import annotations

from typing import Any

from fastapi.responses import HTMLResponse, Response
from sqlalchemy import select

from veil.server import accounts, releases, reviews, signin
from veil.server.access import (
    require_role,
)
from veil.server.audit import verify_audit
from veil.server.errors import InputError, NotFound
from veil.server.models import (
    MAX_ID,
    ROLES,
    ApiToken,
    AuditEntry,
    Dataset,
    DatasetReviewer,
    Release,
    User,
)
from veil.server.throttle import backing_off
from veil.server.web.core import COOKIE, PRE_COOKIE, Ctx, Done, Page
from veil.server.web.proxy import client_address

__all__ = [
    "account",
    "add_user",
    "audit_log",
    "change_password",
    "home",
    "login",
    "login_form",
    "logout",
    "me",
    "new_token",
    "reviewer_list",
    "revoke_token",
    "set_reviewer",
    "standalone",
    "update_user",
    "users",
]

# ----------------------------------------------------------------- home, login


def home(ctx: Ctx) -> Page | Done:
    if ctx.who is None:
        return Done("/login", {"signed_in": False})
    role = ctx.user.role
    data: dict[str, Any] = {"role": role}
    reviewed = ctx.fields.get("reviewed")
    if (
        role == "curator"
        and isinstance(reviewed, str)
        and reviewed.isdigit()
        and int(reviewed[:12]) <= MAX_ID
    ):
        data["reviewed"] = _reviewed(ctx, int(reviewed))
    if role == "curator":
        data["datasets"] = [
            {"id": d.id, "name": d.name, "custody": d.custody}
            for d in ctx.db.scalars(select(Dataset).where(Dataset.owner_id == ctx.user.user.id))
        ]
        assigned = select(DatasetReviewer.dataset_id).where(
            DatasetReviewer.user_id == ctx.user.user.id
        )
        data["reviews"] = [
            releases.release_view(ctx.db, r, public=False)
            for r in ctx.db.scalars(
                select(Release).where(
                    Release.status == "awaiting_approval", Release.dataset_id.in_(assigned)
                )
            )
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
    client = client_address(ctx.request, ctx.config.trusted_proxies)
    previous = accounts.session_identity(ctx.db, ctx.request.cookies.get(COOKIE))
    if previous is not None:
        accounts.logout(ctx.db, previous)
    try:
        who, cookie = signin.login(
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
    must_change = accounts.must_change_password(who)
    return Done(
        "/account?must_change=1" if must_change else "/",
        {"username": who.name, "role": who.role, "must_change_password": must_change},
        cookies={COOKIE: cookie, PRE_COOKIE: None},
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
    client = client_address(ctx.request, ctx.config.trusted_proxies)
    _, cookie = signin.start_session(ctx.db, ctx.config, user, client, mode="stand-alone")
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
            "must_change": accounts.must_change_password(ctx.user),
            "saved": ctx.fields.get("saved") == "password",
            "tokens": [
                {
                    "id": t.id,
                    "name": t.name,
                    "role": t.role,
                    "revoked": t.revoked,
                    "created_at": t.created_at,
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
    return Done("/account?saved=password", {"changed": True})


def users(ctx: Ctx) -> Page:
    require_role(ctx.user, "admin")
    rows = ctx.db.scalars(select(User).order_by(User.id)).all()
    names = {u.id: u.username for u in rows}
    saved = ctx.fields.get("saved")
    return Page(
        "users.html",
        {
            "users": [
                {
                    "id": u.id,
                    "username": u.username,
                    "role": u.role,
                    "active": u.active,
                    "locked": backing_off(ctx.db, u.username),
                    "created_by": names.get(u.created_by or 0, "the platform"),
                    "created_at": u.created_at,
                    "one_time_password": u.password_state == "one_time",
                }
                for u in rows
            ],
            "roles": ROLES,
            "default_role": "data_user",
            "saved": saved if isinstance(saved, str) and saved in names.values() else None,
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
    return Done(
        f"/admin/users?saved={user.username}",
        {"id": user.id, "username": user.username, "role": user.role},
        201,
    )


def update_user(ctx: Ctx, user_id: int) -> Done:
    user = accounts.admin_update(
        ctx.db, ctx.user, int(user_id), str(ctx.fields.get("action") or "")
    )
    return Done("/admin/users", {"id": user.id, "active": user.active})


def reviewer_list(ctx: Ctx) -> Page:
    require_role(ctx.user, "admin")
    curators = ctx.db.scalars(
        select(User).where(User.role == "curator", User.active.is_(True)).order_by(User.username)
    ).all()
    return Page(
        "reviewers.html",
        {
            "datasets": reviews.reviewer_view(ctx.db),
            "curators": [{"id": u.id, "username": u.username} for u in curators],
            "saved": ctx.fields.get("saved") == "1",
        },
    )


def set_reviewer(ctx: Ctx, dataset_id: int) -> Done:
    reviews.assign(
        ctx.db, ctx.user, int(dataset_id), ctx.fields.get("user_id"), ctx.fields.get("action")
    )
    names = [u.username for u in reviews.reviewers(ctx.db, int(dataset_id))]
    return Done("/admin/reviewers?saved=1", {"dataset": int(dataset_id), "reviewers": names})


def audit_log(ctx: Ctx) -> Page:
    require_role(ctx.user, "admin")
    report = verify_audit(ctx.db, checkpoints=ctx.config.checkpoints)
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
