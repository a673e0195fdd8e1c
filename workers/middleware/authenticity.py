"""Who said so: a task is run only if the API (or a media worker) signed it; every result
leaves signed by this worker's component (shared/signing.py)."""

from __future__ import annotations

from dataclasses import dataclass

from shared.errors import Reject
from shared.signing import TaskKeys, sign_result, task_is_authentic
from workers.middleware.chain import Job, Next

UNAUTHENTICATED_TASK = "unauthenticated task"


@dataclass(frozen=True)
class VerifyTask:
    """A task without a valid signature — forged, altered (another plan, input or session), a
    follow-up for another session than its media task, or from a publisher that holds no
    signing key — is dead-lettered unrun."""

    keys: TaskKeys

    async def __call__(self, job: Job, call_next: Next) -> None:
        if not task_is_authentic(self.keys, job.task):
            raise Reject(UNAUTHENTICATED_TASK, kind="unauthenticated")
        await call_next(job)


@dataclass(frozen=True)
class SignResults:
    """Signs every outgoing result with this component's key, naming the component."""

    signer: str
    key: bytes

    async def __call__(self, job: Job, call_next: Next) -> None:
        await call_next(job)
        for outgoing in job.results:
            outgoing.result = sign_result(self.key, self.signer, outgoing.result)
