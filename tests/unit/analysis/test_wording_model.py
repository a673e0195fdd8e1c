"""The learned wording model: pure-Python inference that matches training, and a cue in the
techniques score that supports lexicon evidence and stands alone only when it is sure of a
text long enough to judge."""

import base64
import json
import zlib

import pytest

from shared.errors import DataFileError
from workers.analysis.datafiles import data_path
from workers.analysis.machine_text import style_words
from workers.analysis.techniques import LEARNED, assess_techniques, context_words, report_data
from workers.analysis.text_features import MAX_WORDS, bucket, features, words_of
from workers.analysis.wording_model import (
    CUE_FROM,
    CUE_WEIGHT,
    LONE_FROM,
    LONE_MIN_WORDS,
    MODEL_FILE,
    WordingModel,
    WordingModelFile,
    cue_weight,
    from_file,
    shipped_claims_model,
    shipped_claims_model_file,
    shipped_machine_text_model,
    shipped_machine_text_model_file,
    shipped_model,
    shipped_model_file,
    stands_alone,
)

FLAGGED = 50
LONE_HINT = 35
POST_EN = (
    "Those traitors in parliament sold our country to Brussels and now they want your "
    "children too. Wake up, share this before they delete it, act now while you still can!"
)
POST_RO = (
    "Trădătorii din parlament ne-au vândut țara și acum vor și copiii voștri. Treziți-vă, "
    "distribuiți înainte să fie șters, acționați acum cât mai puteți!"
)
# Neutral texts of the kinds that share the manipulative wording: news quoting a slogan,
# a debunk, labelled satire, an advertisement.
NEUTRAL = [
    "Police removed a banner outside the town hall on Monday. The banner read „Those traitors "
    "sold our country, act now!”, the mayor's office said, and an inquiry has been opened.",
    "Poliția a îndepărtat luni un banner de la primărie. Pe banner scria „Trădătorii ne-au "
    "vândut țara, acționați acum!”, a declarat purtătorul de cuvânt, iar o anchetă a fost "
    "deschisă.",
    "It is not true that vaccines cause autism, the health ministry said on Tuesday, citing "
    "studies of more than a million children in several countries.",
    "SATIRE: Local man discovers that the government has been hiding the truth about Mondays. "
    "Wake up, people, the weekend is a lie and they are coming for your coffee!",
    "Pamflet. Guvernul ascunde adevărul despre ciorbă: trezește-te, popor, sarmalele sunt o "
    "conspirație a bunicilor!",
    "Our bakery in Cluj has moved! Find us from Monday on Memorandumului street, with the same "
    "sourdough and cakes baked at home. We look forward to seeing you.",
]


@pytest.mark.parametrize(
    ("spec_of", "model_of"),
    [
        (shipped_model_file, shipped_model),
        (shipped_claims_model_file, shipped_claims_model),
        (shipped_machine_text_model_file, shipped_machine_text_model),
    ],
    ids=["techniques", "claims", "ai_tampered"],
)
def test_runtime_inference_gives_the_probabilities_the_training_run_recorded(
    spec_of, model_of
) -> None:
    """The worker's pure-Python model, fed the words as the file says it reads them (in
    their context, or whole), reproduces the fitted scikit-learn model's probabilities on
    the reference texts written into the data file."""
    spec = spec_of()
    assert len(spec.reference) >= 4
    assert {r.probability >= 0.5 for r in spec.reference} == {True, False}
    model = model_of()
    for reference in spec.reference:
        read = style_words if spec.words == "whole" else context_words
        words = read(reference.text)
        assert model.probability(words) == pytest.approx(reference.probability, abs=1e-4)


def test_feature_slots_are_a_stable_crc32_not_the_salted_hash() -> None:
    """A feature's slot is crc32 of its name modulo the slot count, the same in every process
    (Python's hash() of a str changes with PYTHONHASHSEED)."""
    assert bucket("c:ver", 2**15) == zlib.crc32(b"c:ver") % 2**15 == 31061
    vector = features([(w, 1.0) for w, _, _ in words_of("vermin vermin")], 2**15)
    assert sum(v * v for v in vector.values()) == pytest.approx(1.0)


def test_the_model_reads_each_word_with_the_share_its_context_leaves() -> None:
    """As for the lexicon's cues: a slogan quoted from a speaker and a denied claim count
    nothing, reported speech 0.3, the rest fully; a long text is read to MAX_WORDS words."""
    text = (
        'The mayor said the budget is fine. Protesters chanted "traitors, act now" outside. '
        "It is not true that vaccines kill. Schools open on Monday."
    )
    shares = dict(context_words(text))
    assert shares["traitors"] == shares["vaccines"] == 0.0
    assert shares["budget"] == pytest.approx(0.3)
    assert shares["mayor"] == shares["protesters"] == shares["schools"] == 1.0
    assert len(context_words("word " * (MAX_WORDS + 50))) == MAX_WORDS


def test_quoted_words_that_count_nothing_give_no_features() -> None:
    """A word whose context leaves it no share (a quote attributed to a speaker) is not
    read by the model at all."""
    words = [("traitors", 0.0), ("budget", 1.0)]
    assert features(words, 2**15) == features([("budget", 1.0)], 2**15)


def test_the_shipped_file_is_small_and_checked_on_load(tmp_path) -> None:
    """The model file stays under 150 kB; weights of the wrong length are refused with the
    file named."""
    assert data_path(MODEL_FILE).stat().st_size < 150_000
    raw = json.loads(data_path(MODEL_FILE).read_text(encoding="utf-8"))
    raw["weights"] = base64.b64encode(b"\x00\x00" * 10).decode()
    with pytest.raises(DataFileError, match=MODEL_FILE):
        from_file(WordingModelFile.model_validate(raw))


def test_the_cue_weight_is_bounded_and_grows_with_the_probability() -> None:
    """Nothing up to CUE_FROM, then rising to CUE_WEIGHT at probability 1, never more."""
    assert cue_weight(0.0) == cue_weight(CUE_FROM) == 0.0
    steps = [cue_weight(CUE_FROM + i * (1 - CUE_FROM) / 10) for i in range(11)]
    assert steps == sorted(steps) and steps[-1] == CUE_WEIGHT
    assert cue_weight(1.5) == CUE_WEIGHT


@pytest.mark.parametrize("post", [POST_EN, POST_RO])
def test_the_cue_joins_lexicon_evidence_with_a_readable_finding(post: str) -> None:
    """In a manipulative post in either language the model adds a bounded finding of its
    own, named for people, quoting a word of the text, and the score rises."""
    with_cue, without = assess_techniques(post), assess_techniques(post, learned=False)
    learned = [f for f in with_cue.findings if f.kind == LEARNED]
    assert len(learned) == 1
    assert 0 < learned[0].weight <= CUE_WEIGHT and learned[0].source == "model"
    assert post[learned[0].start : learned[0].end] == learned[0].text
    assert with_cue.score > without.score >= 0
    summary = report_data(with_cue)["summary"]
    assert any(s.startswith("wording typical of manipulative texts") for s in summary)


def test_the_cue_does_not_stand_alone_in_a_short_text() -> None:
    """A sentence a model reads as manipulative (here one that reads everything at 0.99)
    but the lexicon finds nothing in scores nothing: under LONE_MIN_WORDS words the model
    supports evidence, it is not evidence by itself."""
    text = "Your card expires in March; the new one is sent by post."
    certain = WordingModel(buckets=8, bias=4.6, weights=[0.0] * 8)
    assert certain.probability(context_words(text)) > 0.99
    report = assess_techniques(text, model=certain)
    assert report.score == 0 and not report.findings


def test_a_sure_model_stands_alone_in_a_text_long_enough_to_judge() -> None:
    """From LONE_MIN_WORDS words the cue counts without lexicon evidence once the model is
    sure (LONE_FROM or more): the text is flagged, with the learned finding its only one;
    an unsure model still adds nothing."""
    text = (
        "The library opens at nine on weekdays and at ten on Saturdays. Members can borrow "
        "up to twelve books for three weeks, and renewals are made at the desk or by phone."
    )
    assert len(context_words(text)) >= LONE_MIN_WORDS
    sure = WordingModel(buckets=8, bias=2.0, weights=[0.01] * 8)  # p ≈ 0.88
    unsure = WordingModel(buckets=8, bias=0.4, weights=[0.01] * 8)  # p ≈ 0.60
    report = assess_techniques(text, model=sure)
    assert [f.kind for f in report.findings] == [LEARNED] and report.score >= FLAGGED
    assert not assess_techniques(text, model=unsure).findings


def test_when_the_cue_stands_alone_is_a_pure_rule() -> None:
    """Both bounds hold: sure enough, and long enough."""
    assert stands_alone(LONE_FROM, LONE_MIN_WORDS)
    assert not stands_alone(LONE_FROM - 0.01, 200)
    assert not stands_alone(1.0, LONE_MIN_WORDS - 1)


@pytest.mark.parametrize("text", NEUTRAL)
def test_neutral_texts_with_the_same_wording_stay_low(text: str) -> None:
    """News quoting a slogan, a debunk, labelled satire and an ad stay under the verdict's
    noise floor with the model's cue on."""
    assert assess_techniques(text).score < LONE_HINT


def test_labelled_satire_gets_no_cue() -> None:
    """Satire borrows the very wording the model knows, and says so: no learned finding."""
    report = assess_techniques(f"SATIRE: {POST_EN}")
    assert LEARNED not in report.totals
    assert report.score < FLAGGED


def test_a_model_file_that_reads_words_otherwise_is_refused() -> None:
    """A model trained on whole words fed words in their context (or the other way round)
    gives wrong probabilities: the file says how it reads, and loading checks it."""
    spec = shipped_model_file()
    assert from_file(spec, MODEL_FILE, reads="context")
    with pytest.raises(DataFileError, match="reads 'context' words, not 'whole'"):
        from_file(spec, MODEL_FILE, reads="whole")
    assert shipped_machine_text_model_file().words == "whole"
