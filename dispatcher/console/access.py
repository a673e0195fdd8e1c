"""Who may use the console: a signed-in admin session (else a redirect to sign in), and a
CSRF token bound to that session on every POST (else 403)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, HTTPException, Request, status
from limits import RateLimitItem

from dispatcher.console.cookies import COOKIE, ConsoleSession, SessionCookies
from dispatcher.dependencies import State
from dispatcher.quotas import WindowCounts
from dispatcher.ratelimits import parse_limits, retry_after_s
from dispatcher.state import AppState
from shared.settings import ADMIN_SCOPE, ApiKey

LOGIN = "/admin/login"
HOME = "/admin"
# Where the console is kept on the app's state, made on its first request.
_ON_APP = "console"


@dataclass
class Console:
    """The console's signing key and sign-in limit, read from the settings once."""

    cookies: SessionCookies
    logins: WindowCounts
    login_limits: list[RateLimitItem]

    @classmethod
    def of(cls, state: AppState) -> Console:
        key = state.settings.admin_session_key
        if key is None:
            raise HTTPException(
                status.HTTP_503_SERVICE_UNAVAILABLE,
                "the admin console is off: ADMIN_SESSION_KEY is not set",
            )
        return cls(
            SessionCookies(key.get_secret_value(), state.settings.admin_session_ttl_s),
            WindowCounts(state.settings, state.redis),
            list(parse_limits(state.settings.admin_login_limit)),
        )

    def grant(self, state: AppState, session: ConsoleSession | None) -> ApiKey | None:
        """What the session's key grants now, if it is still configured with the admin scope
        (a key removed from API_KEYS ends its sessions at the API's next start)."""
        if session is None or session.key_hash is None:
            return None
        grant = state.settings.api_keys.get(session.key_hash)
        return grant if grant is not None and ADMIN_SCOPE in grant.scopes else None

    async def refuse_too_many_logins(self, address: str) -> None:
        """Count a sign-in attempt from `address`; 429 past ADMIN_LOGIN_LIMIT."""
        usages = await self.logins.charge("console_login", self.login_limits, "login", address)
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
    if on.grant(state, session) is None:
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
