"""Analysis against real services: the fact-check store in Postgres, the media cache in Redis,
and the LLM, transcription, OCR and evidence services as fake HTTP servers over real HTTP."""

from __future__ import annotations

import asyncio
import json
import threading
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest
from click.testing import CliRunner
from PIL import Image, ImageDraw, ImageFont, PngImagePlugin
from redis.asyncio import Redis

from aggregator.explanation import llm_explanation, template_explanation
from shared import llm
from shared.errors import MediaUnavailable, RetryableAnalysisError
from shared.house import redis_house
from shared.keys import Keys
from shared.llm import TechniquesReply, ask_json
from shared.messages import Task, TaskInput, now_ms
from shared.settings import Settings
from tests import services as svc
from workers.analysis import evidence, factcheck_store
from workers.analysis.cli import factchecks
from workers.analysis.errors import FactCheckStoreMissing, UnreadableMedia
from workers.analysis.media import installed_tesseract, ocr_with_tesseract
from workers.executor import ExecutorContext, executor_for
from workers.executors import media_preprocess
from workers.isolation import AnalysisPool

pytestmark = pytest.mark.integration

# The services discovered for this run (tests/services.py), set by `_discovered` below.
FOUND: dict[str, str] = {}
MIGRATION = Path(__file__).parents[2] / "shared" / "migrations" / "002_fact_checks.sql"


# --- a fake HTTP service on 127.0.0.1, real sockets ----------------------------------------


@dataclass
class Reply:
    status: int = 200
    body: Any = field(default_factory=dict)
    delay_s: float = 0.0


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: bytes


# A reply this slow is one no timeout of ours waits for; "within bounds" means well under it,
# a margin that holds on a loaded machine (a timeout-less wait would take all of it).
SLOW_S = 10.0


class FakeService:
    """A threaded HTTP server answering POSTs from a per-path script of replies."""

    def __init__(self) -> None:
        self.script: dict[str, list[Reply]] = {}
        self.seen: list[Seen] = []
        service = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                service.seen.append(Seen(self.path, dict(self.headers), body))
                replies = service.script.get(self.path) or [Reply(404, {"error": "no route"})]
                reply = replies.pop(0) if len(replies) > 1 else replies[0]
                time.sleep(reply.delay_s)
                raw = (
                    reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
                )
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(raw)))
                    self.end_headers()
                    self.wfile.write(raw)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up first: that is what timeout tests want

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def on(self, path: str, *replies: Reply) -> None:
        self.script[path] = list(replies)

    def hits(self, path: str) -> int:
        return sum(1 for s in self.seen if s.path == path)


@pytest.fixture
def fake() -> Iterator[FakeService]:
    service = FakeService()
    service.thread.start()
    yield service
    service.server.shutdown()
    service.server.server_close()


# --- real Postgres and Redis ----------------------------------------------------------------


@pytest.fixture(scope="module", autouse=True)
def _discovered(services: svc.Services) -> Iterator[None]:
    """Redis and Postgres as the run discovered them, never read from the environment here."""
    FOUND.update(redis=services.redis_url, database=services.database_admin_url)
    yield
    FOUND.clear()


@pytest.fixture(scope="module")
async def fact_db_url(services: svc.Services) -> AsyncIterator[str]:
    """A database of our own with migration 002 applied and the sample loaded; dropped after."""
    name = f"verdict_analysis_{uuid.uuid4().hex[:10]}"
    url = await svc.create_database(services.database_admin_url, name)
    try:
        conn = await asyncpg.connect(url)
        try:
            async with conn.transaction():
                await conn.execute(MIGRATION.read_text())
            await factcheck_store.upsert(conn, factcheck_store.read_fact_checks())
        finally:
            await conn.close()
        yield url
    finally:
        await svc.drop_database(services.database_admin_url, name)


@pytest.fixture
async def fact_pool(fact_db_url: str) -> AsyncIterator[asyncpg.Pool]:
    pool = await asyncpg.create_pool(fact_db_url, min_size=1, max_size=4)
    yield pool
    await pool.close()


@pytest.fixture(scope="module")
async def analysis_pool() -> AsyncIterator[AnalysisPool]:
    """The process pool the executors run their CPU-bound analysis in, as in a worker."""
    pool = AnalysisPool(1)
    yield pool
    await pool.close()


@pytest.fixture
async def redis_client(services: svc.Services) -> AsyncIterator[Redis]:
    client = Redis.from_url(services.redis_url)
    yield client
    await client.aclose()


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient() as client:
        yield client


def settings_for(db_url: str | None = None, **overrides: Any) -> Settings:
    return Settings(
        amqp_url="amqp://unused",
        redis_url=FOUND["redis"],
        database_url=db_url or FOUND["database"],
        **overrides,
    )


def task_for(component: str, content: str | None = None, **input_fields: Any) -> Task:
    return Task(
        session_id=str(uuid.uuid4()),
        component=component,
        plan_type=4,
        priority=6,
        input=TaskInput(content=content, **input_fields),
        user_id="u-1",
        timestamp=now_ms(),
    )


@dataclass
class Dispatched:
    tasks: list[Task] = field(default_factory=list)

    async def __call__(self, task: Task) -> None:
        self.tasks.append(task)


def context(
    settings: Settings, redis: Any, db: Any, http: httpx.AsyncClient, analysis: AnalysisPool
) -> tuple[ExecutorContext, Dispatched]:
    dispatched = Dispatched()
    shelf = redis_house(redis).shelf
    ctx = ExecutorContext(settings, shelf, db, http, dispatched, "test-worker", analysis=analysis)
    return ctx, dispatched


# --- fact-check store -----------------------------------------------------------------------


async def test_migration_is_rerunnable_and_indexes_by_trigram(fact_pool: asyncpg.Pool) -> None:
    """002 applies again without error, and a GIN trigram index serves claim lookups."""
    async with fact_pool.acquire() as conn, conn.transaction():
        await conn.execute(MIGRATION.read_text())
    indexdef = await fact_pool.fetchval(
        "SELECT indexdef FROM pg_indexes WHERE indexname = 'fact_checks_claim_norm_trgm'"
    )
    assert "gin" in indexdef and "gin_trgm_ops" in indexdef


async def test_loading_twice_updates_instead_of_duplicating(fact_pool: asyncpg.Pool) -> None:
    """Reloading the sample keeps one row per (source, claim) and applies a changed rating."""
    checks = factcheck_store.read_fact_checks()
    await factcheck_store.upsert(fact_pool, checks)
    assert await fact_pool.fetchval("SELECT count(*) FROM fact_checks") == len(checks)
    changed = checks[0].model_copy(update={"rating": "mixed"})
    await factcheck_store.upsert(fact_pool, [changed])
    rating = await fact_pool.fetchval(
        "SELECT rating FROM fact_checks WHERE claim = $1", changed.claim
    )
    assert rating == "mixed"
    await factcheck_store.upsert(fact_pool, [checks[0]])


async def test_lookup_finds_false_claims_and_leaves_others_unverifiable(
    fact_pool: asyncpg.Pool,
) -> None:
    """A paraphrase typed without diacritics meets its check; an ordinary figure does not."""
    found = await factcheck_store.lookup(
        fact_pool, "Stiati ca vaccinurile anti-COVID va modifica ADN-ul?"
    )
    assert (found.status, found.rating) == ("matched", "false")
    assert found.checked_claim == "Vaccinul anti-COVID modifică ADN-ul uman"
    assert found.similarity is not None and found.similarity >= 0.45
    other = await factcheck_store.lookup(
        fact_pool, "The ministry reported 120 new cases on Tuesday."
    )
    assert other.status == "unverifiable"


async def test_lookup_needs_the_checks_subject_not_only_its_wording(
    fact_pool: asyncpg.Pool,
) -> None:
    """A sentence that shares a check's country, union and year but not what it checked
    (road deaths, not inflation) meets no check; the claim itself, reworded, still does."""
    other = await factcheck_store.lookup(
        fact_pool,
        "România a avut în 2023 cea mai ridicată rată a deceselor rutiere din Uniunea Europeană.",
    )
    assert other.status == "unverifiable"
    found = await factcheck_store.lookup(
        fact_pool, "În 2023 inflația din România a fost cea mai mare din toată Uniunea Europeană."
    )
    assert (found.status, found.rating) == ("matched", "mixed")


async def test_lookup_leaves_the_pooled_connection_settings_alone(fact_pool: asyncpg.Pool) -> None:
    """The candidate threshold is set per transaction, so pooled connections keep the default."""
    await factcheck_store.lookup(fact_pool, "Vaccines cause autism in children.")
    async with fact_pool.acquire() as conn:
        assert await conn.fetchval("SHOW pg_trgm.similarity_threshold") == "0.3"


async def test_lookup_without_the_table_says_which_migration_is_missing(fact_db_url: str) -> None:
    """A database without migration 002 gives FactCheckStoreMissing, not a bare SQL error."""
    conn = await asyncpg.connect(fact_db_url)
    try:
        await conn.execute(
            "CREATE SCHEMA IF NOT EXISTS empty_probe; SET search_path TO empty_probe"
        )
        with pytest.raises(FactCheckStoreMissing, match="migration 002"):
            await factcheck_store.lookup(conn, "Vaccines cause autism.")
    finally:
        await conn.close()


def test_cli_loads_the_sample(fact_db_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """`factchecks load` reads settings from the environment and upserts the shipped sample."""
    monkeypatch.setenv("AMQP_URL", "amqp://unused")
    monkeypatch.setenv("REDIS_URL", FOUND["redis"])
    monkeypatch.setenv("DATABASE_URL", fact_db_url)
    result = CliRunner().invoke(factchecks, ["load"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"loaded {len(factcheck_store.read_fact_checks())} fact checks")


async def test_first_start_loads_the_sample_once_and_keeps_operators_edits(
    fact_db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`factchecks load --if-empty` (compose's first-start job) fills an empty store, and on
    every later start leaves the store, edits included, as it is."""
    monkeypatch.setenv("AMQP_URL", "amqp://unused")
    monkeypatch.setenv("REDIS_URL", FOUND["redis"])
    monkeypatch.setenv("DATABASE_URL", fact_db_url)
    conn = await asyncpg.connect(fact_db_url)
    try:
        await conn.execute("TRUNCATE fact_checks")
        first = await asyncio.to_thread(CliRunner().invoke, factchecks, ["load", "--if-empty"])
        assert first.exit_code == 0, first.output
        assert await conn.fetchval("SELECT count(*) FROM fact_checks") == len(
            factcheck_store.read_fact_checks()
        )
        await conn.execute("UPDATE fact_checks SET summary = 'edited by an operator'")
        again = await asyncio.to_thread(CliRunner().invoke, factchecks, ["load", "--if-empty"])
        assert again.exit_code == 0, again.output
        assert "nothing loaded" in again.output
        summaries = await conn.fetch("SELECT DISTINCT summary FROM fact_checks")
        assert [r["summary"] for r in summaries] == ["edited by an operator"]
    finally:
        await conn.close()


# --- claims executor with the store and an evidence provider ---------------------------------


async def test_claims_executor_raises_risk_for_a_false_claim(
    fact_pool: asyncpg.Pool,
    redis_client: Redis,
    http: httpx.AsyncClient,
    analysis_pool: AnalysisPool,
) -> None:
    """A claim rated false in the store makes the claims score high, with the check cited."""
    ctx, _ = context(settings_for(), redis_client, fact_pool, http, analysis_pool)
    text = "Bicarbonatul de sodiu vindecă cancerul, spun ei. Vremea a fost frumoasă."
    analysis = await executor_for("claims")(task_for("claims", text), ctx)
    assert analysis.score >= 85
    assert analysis.data["claims"][0]["rating"] == "false"
    assert analysis.data["claims"][0]["url"].startswith("https://factchecks.example/")
    json.dumps(analysis.data)


async def test_claims_executor_reports_risky_claims_the_store_cannot_verify(
    fact_pool: asyncpg.Pool,
    redis_client: Redis,
    http: httpx.AsyncClient,
    analysis_pool: AnalysisPool,
) -> None:
    """An unmatched miracle cure shared on WhatsApp scores high and is listed as unverified;
    a text without a check-worthy claim is not applicable."""
    ctx, _ = context(settings_for(), redis_client, fact_pool, http, analysis_pool)
    text = "Un mesaj de pe WhatsApp spune că ceaiul de pătrunjel vindecă leucemia în doar 3 zile."
    analysis = await executor_for("claims")(task_for("claims", text), ctx)
    assert analysis.score >= 50
    assert analysis.data["applicable"] is True
    assert analysis.data["evidence_count"] == 1
    assert analysis.data["unverified"][0]["text"] == text
    calm = await executor_for("claims")(task_for("claims", "Vremea a fost frumoasă azi."), ctx)
    assert (calm.score, calm.data["applicable"], calm.data["evidence_count"]) == (0.0, False, 0)


async def test_ai_tampered_executor_says_whether_the_text_could_be_judged(
    fact_pool: asyncpg.Pool,
    redis_client: Redis,
    http: httpx.AsyncClient,
    analysis_pool: AnalysisPool,
) -> None:
    """Generic assistant prose is judged with its evidence counted; a short text is not
    applicable and scores low."""
    ctx, _ = context(settings_for(), redis_client, fact_pool, http, analysis_pool)
    prose = (
        "Regular exercise offers numerous benefits for physical and mental health. It "
        "strengthens the heart, improves flexibility and supports healthy weight management. "
        "In addition, physical activity can reduce stress and enhance mood. Establishing a "
        "consistent routine is essential for long-term success. By incorporating movement "
        "into daily life, individuals can significantly improve their overall well-being."
    )
    judged = await executor_for("ai_tampered")(task_for("ai_tampered", prose), ctx)
    assert judged.score >= 50
    assert judged.data["applicable"] is True and judged.data["evidence_count"] >= 2
    short = "Furthermore, it is essential to note this."
    brief = await executor_for("ai_tampered")(task_for("ai_tampered", short), ctx)
    assert brief.score <= 10
    assert (brief.data["applicable"], brief.data["text"]["applicable"]) == (False, False)


async def test_evidence_provider_rates_claims_the_store_does_not_know(
    fact_pool: asyncpg.Pool,
    redis_client: Redis,
    http: httpx.AsyncClient,
    fake: FakeService,
    analysis_pool: AnalysisPool,
) -> None:
    """An unmatched claim goes to the provider; its "misleading" answer is used and cited."""
    fake.on(
        "/evidence",
        Reply(200, {"rating": "Misleading", "source": "Desk", "url": "https://d.example/1"}),
    )
    ctx, _ = context(
        settings_for(evidence_url=f"{fake.url}/evidence"),
        redis_client,
        fact_pool,
        http,
        analysis_pool,
    )
    analysis = await executor_for("claims")(
        task_for("claims", "Orașul a plantat 3 milioane de copaci în 2023."), ctx
    )
    claim = analysis.data["claims"][0]
    assert (claim["status"], claim["rating"], claim["source"]) == ("evidence", "misleading", "Desk")
    assert analysis.score == 70.0
    assert json.loads(fake.seen[0].body) == {
        "claim": "Orașul a plantat 3 milioane de copaci în 2023."
    }


@pytest.mark.parametrize(
    "reply", [Reply(500, {"error": "down"}), Reply(200, b"<html>"), Reply(200, {}, SLOW_S)]
)
async def test_evidence_provider_failures_leave_the_claim_unverifiable(
    reply: Reply, http: httpx.AsyncClient, fake: FakeService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 5xx, a non-JSON body or a slow provider yields "unverifiable", within the timeout."""
    monkeypatch.setattr(evidence, "EVIDENCE_TIMEOUT_S", 0.3)
    fake.on("/evidence", reply)
    started = time.monotonic()
    result = await evidence.ask_evidence(http, f"{fake.url}/evidence", "Some claim with 3 numbers.")
    assert result.status == "unverifiable"
    assert time.monotonic() - started < SLOW_S / 2  # cut off by the timeout, not the reply


# --- LLM gateway ----------------------------------------------------------------------------


def chat_reply(content: str) -> Reply:
    return Reply(200, {"choices": [{"message": {"role": "assistant", "content": content}}]})


async def test_llm_gateway_gets_model_key_and_messages_and_reply_is_parsed(
    http: httpx.AsyncClient, fake: FakeService
) -> None:
    """The request names the model with a bearer key; the JSON content parses into the schema."""
    fake.on(
        "/v1/chat/completions",
        chat_reply('{"findings": [{"technique": "urgency", "quote": "acum"}]}'),
    )
    settings = settings_for(llm_url=fake.url, llm_model="test-model", llm_api_key="k-1")
    reply = await ask_json(http, settings, "system", "user", TechniquesReply)
    assert reply is not None and reply.findings[0].technique == "urgency"
    request = json.loads(fake.seen[0].body)
    assert request["model"] == "test-model"
    assert [m["role"] for m in request["messages"]] == ["system", "user"]
    assert fake.seen[0].headers["Authorization"] == "Bearer k-1"


async def test_llm_gateway_is_retried_once_after_a_5xx(
    http: httpx.AsyncClient, fake: FakeService
) -> None:
    """A 503 is retried once; the second answer is used."""
    fake.on("/v1/chat/completions", Reply(503), chat_reply('{"findings": []}'))
    reply = await ask_json(http, settings_for(llm_url=fake.url), "s", "u", TechniquesReply)
    assert reply is not None and reply.findings == []
    assert fake.hits("/v1/chat/completions") == 2


async def test_llm_off_schema_or_slow_gives_none_within_bounds(
    http: httpx.AsyncClient, fake: FakeService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An off-schema reply is not retried; a hanging gateway costs at most two timeouts."""
    settings = settings_for(llm_url=fake.url)
    fake.on("/v1/chat/completions", chat_reply('{"verdict": "bad"}'))
    assert await ask_json(http, settings, "s", "u", TechniquesReply) is None
    assert fake.hits("/v1/chat/completions") == 1
    monkeypatch.setattr(llm, "LLM_TIMEOUT_S", 0.3)
    fake.on("/v1/chat/completions", Reply(200, {}, SLOW_S))
    started = time.monotonic()
    assert await ask_json(http, settings, "s", "u", TechniquesReply) is None
    assert time.monotonic() - started < SLOW_S / 2  # two short timeouts, not the reply
    assert fake.hits("/v1/chat/completions") == 3


async def test_techniques_executor_adds_only_verbatim_llm_findings(
    redis_client: Redis, http: httpx.AsyncClient, fake: FakeService, analysis_pool: AnalysisPool
) -> None:
    """The model's quoted finding is added; a quote not in the text is ignored."""
    proposals = {
        "findings": [
            {"technique": "loaded_language", "quote": "bătaie de joc ordinară"},
            {"technique": "fear_appeal", "quote": "something the text never says"},
        ]
    }
    fake.on("/v1/chat/completions", chat_reply(json.dumps(proposals)))
    ctx, _ = context(settings_for(llm_url=fake.url), redis_client, None, http, analysis_pool)
    text = "Ce s-a întâmplat ieri în consiliu a fost o bătaie de joc ordinară."
    analysis = await executor_for("techniques")(task_for("techniques", text), ctx)
    from_llm = [f for f in analysis.data["findings"] if f["source"] == "llm"]
    assert analysis.data["llm_reviewed"] is True
    assert [f["text"] for f in from_llm] == ["bătaie de joc ordinară"]


async def test_explanation_by_llm_and_fallback_to_template(
    http: httpx.AsyncClient, fake: FakeService
) -> None:
    """A valid reply becomes the explanation; garbage falls back to the deterministic template."""
    components = {"techniques": {"status": "ok", "score": 80.0, "data": {"summary": ["x"]}}}
    settings = settings_for(llm_url=fake.url)
    written = {
        "ro": "Textul folosește tehnici de manipulare evidente.",
        "en": "The text uses obvious manipulation.",
    }
    fake.on("/v1/chat/completions", chat_reply(json.dumps(written)))
    assert await llm_explanation(http, settings, "high_risk", 80.0, 1.0, components) == written
    fake.on("/v1/chat/completions", chat_reply("I think it is bad."))
    fallback = await llm_explanation(http, settings, "high_risk", 80.0, 1.0, components)
    assert fallback == template_explanation("high_risk", 80.0, 1.0, components)


# --- media_preprocess: transcription, OCR, cache, dispatch ----------------------------------


async def test_audio_is_transcribed_cached_and_dispatched(
    tmp_path: Path,
    redis_client: Redis,
    http: httpx.AsyncClient,
    fake: FakeService,
    analysis_pool: AnalysisPool,
) -> None:
    """The transcript comes from the endpoint, is cached for an hour and feeds four tasks."""
    (tmp_path / "clip.mp3").write_bytes(b"ID3 fake audio")
    fake.on("/v1/audio/transcriptions", Reply(200, {"text": "Vaccinurile provoacă autism."}))
    settings = settings_for(
        transcription_url=fake.url,
        transcription_api_key="t-1",
        transcription_model="small",
        media_root=str(tmp_path),
    )
    ctx, dispatched = context(settings, redis_client, None, http, analysis_pool)
    task = task_for(
        "media_preprocess",
        "Ascultați!",
        media_path="clip.mp3",
        input_type="audio",
        url="https://x.example",
    )
    try:
        first = await executor_for("media_preprocess")(task, ctx)
        second = await executor_for("media_preprocess")(task, ctx)
        ttl = await redis_client.ttl(Keys(settings.key_prefix).media_text(task.session_id))
    finally:
        await redis_client.delete(Keys(settings.key_prefix).media_text(task.session_id))
    assert (first.data["cached"], second.data["cached"]) == (False, True)
    assert fake.hits("/v1/audio/transcriptions") == 1
    assert 3500 < ttl <= 3600
    sent = fake.seen[0]
    assert sent.headers["Authorization"] == "Bearer t-1"
    assert b'name="model"\r\n\r\nsmall' in sent.body and b"ID3 fake audio" in sent.body
    first_four = dispatched.tasks[:4]
    assert [t.component for t in first_four] == ["techniques", "ai_tampered", "claims", "domain"]
    for follow in first_four:
        assert (
            follow.session_id == task.session_id and follow.plan_type == 4 and follow.priority == 6
        )
        assert follow.user_id == "u-1" and follow.input.url == "https://x.example"
        assert follow.input.media_path == "clip.mp3" and follow.input.input_type == "audio"
        assert follow.input.content == "Ascultați!\n\nVaccinurile provoacă autism."


async def test_image_goes_to_the_ocr_service_when_tesseract_is_absent(
    tmp_path: Path,
    redis_client: Redis,
    http: httpx.AsyncClient,
    fake: FakeService,
    monkeypatch: pytest.MonkeyPatch,
    analysis_pool: AnalysisPool,
) -> None:
    """Without tesseract, the image is posted to ocr_url and its text dispatched."""
    monkeypatch.setattr(media_preprocess, "installed_tesseract", lambda: None)
    Image.new("RGB", (8, 8)).save(tmp_path / "meme.png")
    fake.on("/ocr", Reply(200, {"text": "  DISTRIBUIȚI ACUM!  "}))
    settings = settings_for(ocr_url=f"{fake.url}/ocr", media_root=str(tmp_path))
    ctx, dispatched = context(settings, redis_client, None, http, analysis_pool)
    task = task_for("media_preprocess", media_path="meme.png", input_type="image")
    try:
        analysis = await executor_for("media_preprocess")(task, ctx)
    finally:
        await redis_client.delete(Keys(settings.key_prefix).media_text(task.session_id))
    assert analysis.data["method"] == "ocr_service"
    assert {t.input.content for t in dispatched.tasks} == {"DISTRIBUIȚI ACUM!"}


async def test_media_without_a_configured_service_fails_at_once(
    tmp_path: Path, redis_client: Redis, http: httpx.AsyncClient, analysis_pool: AnalysisPool
) -> None:
    """No transcription service: MediaUnavailable (not retryable) with the reason, no tasks."""
    (tmp_path / "talk.mp4").write_bytes(b"video")
    ctx, dispatched = context(
        settings_for(media_root=str(tmp_path)), redis_client, None, http, analysis_pool
    )
    task = task_for("media_preprocess", media_path="talk.mp4", input_type="video")
    started = time.monotonic()
    with pytest.raises(MediaUnavailable, match="transcription_url") as caught:
        await executor_for("media_preprocess")(task, ctx)
    assert not caught.value.retryable
    assert time.monotonic() - started < SLOW_S / 2  # no wait for a service that is not there
    assert dispatched.tasks == []


@pytest.mark.parametrize(
    "reply", [Reply(503, {"error": "busy"}), Reply(200, {"text": "late"}, 1.0)]
)
async def test_transient_transcription_failures_are_retryable(
    reply: Reply,
    tmp_path: Path,
    redis_client: Redis,
    http: httpx.AsyncClient,
    fake: FakeService,
    analysis_pool: AnalysisPool,
) -> None:
    """A 5xx or a timeout from the endpoint raises RetryableAnalysisError within the budget."""
    (tmp_path / "a.wav").write_bytes(b"RIFF")
    fake.on("/v1/audio/transcriptions", reply)
    settings = settings_for(
        transcription_url=fake.url, media_root=str(tmp_path), task_timeout_s=0.4
    )
    ctx, dispatched = context(settings, redis_client, None, http, analysis_pool)
    task = task_for("media_preprocess", media_path="a.wav", input_type="audio")
    with pytest.raises(RetryableAnalysisError):
        await executor_for("media_preprocess")(task, ctx)
    assert dispatched.tasks == []
    assert await redis_client.exists(Keys(settings.key_prefix).media_text(task.session_id)) == 0


# --- ai_tampered reads the image named by the task -------------------------------------------


async def test_ai_tampered_reports_generator_metadata_of_the_image(
    tmp_path: Path, redis_client: Redis, http: httpx.AsyncClient, analysis_pool: AnalysisPool
) -> None:
    """An image with a ComfyUI "prompt" chunk scores high whatever its OCR text says."""
    info = PngImagePlugin.PngInfo()
    info.add_text("prompt", '{"3": {"class_type": "KSampler"}}')
    Image.new("RGB", (8, 8)).save(tmp_path / "gen.png", pnginfo=info)
    ctx, _ = context(
        settings_for(media_root=str(tmp_path)), redis_client, None, http, analysis_pool
    )
    task = task_for(
        "ai_tampered", "O poză de la protest, ieri seară.", media_path="gen.png", input_type="image"
    )
    analysis = await executor_for("ai_tampered")(task, ctx)
    assert analysis.score >= 85
    assert analysis.data["image"]["signs"][0]["sign"] == "generator_parameters"
    assert "text" in analysis.data
    json.dumps(analysis.data)


# --- local tesseract (scripts/system-packages installs it) -----------------------------------


async def test_tesseract_reads_text_from_an_image(tmp_path: Path) -> None:
    """The local tesseract binary turns rendered words back into text."""
    assert installed_tesseract(), "tesseract is missing: scripts/system-packages installs it"
    image = Image.new("RGB", (900, 120), "white")
    font = ImageFont.load_default(size=48)
    ImageDraw.Draw(image).text((20, 30), "SHARE BEFORE DELETED", fill="black", font=font)
    image.save(tmp_path / "words.png")
    media = await ocr_with_tesseract(installed_tesseract() or "", tmp_path / "words.png")
    assert media.method == "tesseract"
    assert "SHARE" in media.text.upper() and "DELETED" in media.text.upper()


async def test_tesseract_never_reads_files_a_media_file_lists(tmp_path: Path) -> None:
    """A "media file" that is a text list of image paths (which tesseract would OCR one by
    one, reading another tenant's scan) is refused as no image; the listed scan is not read."""
    secret = Image.new("RGB", (900, 120), "white")
    font = ImageFont.load_default(size=48)
    ImageDraw.Draw(secret).text((20, 30), "PRIVATE SCAN", fill="black", font=font)
    secret.save(tmp_path / "other-tenant.png")
    (tmp_path / "list.png").write_text(f"{tmp_path / 'other-tenant.png'}\n")
    with pytest.raises(UnreadableMedia, match="not a readable image"):
        await ocr_with_tesseract(installed_tesseract() or "", tmp_path / "list.png")
