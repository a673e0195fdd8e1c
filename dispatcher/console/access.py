"""Who may use the console: a signed-in admin session (else a redirect to sign in) whose
cookie was not signed out, and a CSRF token bound to that session on every POST (else 403)."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass
from typing import Annotated, TypeVar

import asyncpg
from fastapi import Depends, HTTPException, Request, status
from limits import RateLimitItem
from redis.exceptions import RedisError

from dispatcher.console.cookies import COOKIE, ConsoleSession, SessionCookies
from dispatcher.dependencies import State
from dispatcher.quotas import WindowCounts
from dispatcher.ratelimits import Usage, parse_limits, retry_after_s
from dispatcher.state import AppState
from shared import db as database
from shared.api_keys import key_label
from shared.keys import Keys
from shared.settings import ADMIN_SCOPE, ApiKey

LOGIN = "/admin/login"
HOME = "/admin"
# Where the console is kept on the app's state, made on its first request.
_ON_APP = "console"
T = TypeVar("T")


@dataclass
class Console:
    """The console's signing key and sign-in limit, read from the settings once, and the
    admin keys' hashes by the tag a cookie carries for each."""

    cookies: SessionCookies
    logins: WindowCounts
    login_limits: list[RateLimitItem]
    key_hashes: dict[str, str]
    keys: Keys

    @classmethod
    def of(cls, state: AppState) -> Console:
        key = state.settings.admin_session_key
        if key is None:
            raise HTTPException(
                status.HTTP_503_SERVICE_UNAVAILABLE,
                "the admin console is off: ADMIN_SESSION_KEY is not set",
            )
        cookies = SessionCookies(key.get_secret_value(), state.settings.admin_session_ttl_s)
        return cls(
            cookies,
            WindowCounts(state.settings, state.house),
            list(parse_limits(state.settings.admin_login_limit)),
            {cookies.key_tag(h): h for h in state.settings.api_keys},
            Keys(state.settings.key_prefix),
        )

    def grant(self, state: AppState, session: ConsoleSession | None) -> ApiKey | None:
        """What the session's key grants now, if it is still configured with the admin scope
        (a key removed from API_KEYS ends its sessions at the API's next start)."""
        if session is None or session.key_tag is None:
            return None
        grant = state.settings.api_keys.get(self.key_hashes.get(session.key_tag, ""))
        return grant if grant is not None and ADMIN_SCOPE in grant.scopes else None

    def operator(self, state: AppState, session: ConsoleSession | None) -> str | None:
        """Who the signed-in admin is in logs and records: its key's label,
        `tenant/ab12cd34`; None for a session not signed in."""
        grant = self.grant(state, session)
        if grant is None or session is None or session.key_tag is None:
            return None
        return key_label(grant.tenant, self.key_hashes[session.key_tag])

    async def revoke(self, state: AppState, session: ConsoleSession) -> None:
        """Sign the session out for good: its nonce is refused for the cookie's remaining life
        (a copy of the cookie would otherwise work until it expires). 503 when the house fails
        (Redis, or PostgreSQL without it)."""
        ttl = self.cookies.remaining_s(session, time.time())
        key = self.keys.console_signed_out(session.nonce)
        await _house_or_503(state.house.shelf.put(key, "1", ttl))

    async def signed_out(self, state: AppState, session: ConsoleSession) -> bool:
        """Whether the session was signed out; 503 when the house cannot say (fail closed)."""
        key = self.keys.console_signed_out(session.nonce)
        found = await _house_or_503(state.house.shelf.get(key))
        return found is not None

    async def refuse_too_many_logins(self, address: str) -> None:
        """429 when `address` has failed ADMIN_LOGIN_LIMIT sign-ins lately; this attempt is
        not counted (only a failure is, by `count_failed_login`)."""
        usages = await self.logins.peek("console_login", self.login_limits, "login", address)
        _refuse_past(usages)

    async def count_failed_login(self, address: str) -> None:
        """Count a failed sign-in from `address`: successes never lock an address out."""
        await self.logins.charge("console_login", self.login_limits, "login", address)


async def _house_or_503(pending: Awaitable[T]) -> T:
    try:
        return await pending
    except (RedisError, *database.UNAVAILABLE, asyncpg.PostgresError) as exc:
        raise HTTPException(
            status.HTTP_503_SERVICE_UNAVAILABLE,
            "the console cannot check sign-outs right now; try again shortly",
        ) from exc


def _refuse_past(usages: Sequence[Usage] | None) -> None:
    wait = retry_after_s(usages or ())
    if wait is not None:
        raise HTTPException(
            status.HTTP_429_TOO_MANY_REQUESTS,
            f"too many sign-in attempts from this address; try again in {wait} s",
            headers={"Retry-After": str(wait)},
        )


async def console(request: Request, state: State) -> Console:
    """The app's console, made on first use; 503 while ADMIN_SESSION_KEY is unset."""
    found: Console | None = getattr(request.app.state, _ON_APP, None)
    if found is None:
        found = Console.of(state)
        setattr(request.app.state, _ON_APP, found)
    return found


def browser_session(request: Request, on: Console) -> ConsoleSession | None:
    """The session the request's cookie carries, signed in or not; None without a valid one."""
    return on.cookies.read(request.cookies.get(COOKIE))


async def signed_in(
    request: Request, state: State, on: Annotated[Console, Depends(console)]
) -> ConsoleSession:
    """The request's admin session; without one, a redirect to the sign-in page."""
    session = browser_session(request, on)
    if session is None or on.grant(state, session) is None or await on.signed_out(state, session):
        raise HTTPException(
            status.HTTP_303_SEE_OTHER, "sign in to the console first", headers={"Location": LOGIN}
        )
    assert session is not None
    return session


async def csrf_checked(
    request: Request,
    session: Annotated[ConsoleSession, Depends(signed_in)],
    on: Annotated[Console, Depends(console)],
) -> ConsoleSession:
    """`signed_in`, for a POST whose form carries the session's CSRF token; 403 otherwise."""
    form = await request.form()
    token = form.get("csrf_token")
    if not on.cookies.csrf_valid(session, token if isinstance(token, str) else None):
        raise HTTPException(status.HTTP_403_FORBIDDEN, CSRF_REFUSED)
    return session


CSRF_REFUSED = "this form's security token is missing or out of date; reload the page and retry"

TheConsole = Annotated[Console, Depends(console)]
SignedIn = Annotated[ConsoleSession, Depends(signed_in)]
Posted = Annotated[ConsoleSession, Depends(csrf_checked)]
