"""Technique families in Romanian and English: manipulative texts flagged (score >= 50),
neutral texts that mention the same words kept low, matching on lemmas, negation and
quotation, and the data file's validation."""

import copy

import pytest

from shared.errors import DataFileError
from tests.unit.analysis.evasion import EVASIONS
from workers.analysis.datafiles import load
from workers.analysis.techniques import assess_techniques, compile_lexicon, report_data

FLAGGED = 50

# (family, text): each text uses its family strongly enough to pass 50 with little else.
MANIPULATIVE = [
    ("dehumanisation", "Those refugees are parasites living off our taxes."),
    ("dehumanisation", "Politicienii ăștia sunt o ciumă pentru țară."),
    ("dehumanisation", "Journalists are cockroaches, and cockroaches get stepped on."),
    ("dehumanisation", "Trebuie să-i stârpim pe trădători înainte să fie prea târziu."),
    # "nu … decât" restricts rather than negates: "are nothing but a plague"
    ("dehumanisation", "Refugiații nu sunt decât o plagă pentru orașele noastre."),
    ("collective_blame", "All immigrants are criminals and they are to blame for everything."),
    (
        "collective_blame",
        "Toți bugetarii sunt leneși și sunt de vină pentru tot ce ni se întâmplă.",
    ),
    (
        "urgency",
        "Only 3 days remain before the bank freezes your deposits, withdraw your cash now!",
    ),
    ("urgency", "Mai sunt doar 2 zile! Scoateți-vă banii din bancă cât mai puteți."),
    ("conspiracy", "The pharmaceutical companies are hiding the real figures from us."),
    ("conspiracy", "Oficialii ascund adevărul: totul a fost plănuit de o elită globalistă."),
    ("miracle_cure", "This ancient remedy heals arthritis in 10 days, and pharma is furious."),
    ("miracle_cure", "Un leac natural vindecă diabetul în 7 zile. Renunțați la pastile!"),
    ("fear_appeal", "They are coming to confiscate your homes, and our nation will vanish."),
    ("fear_appeal", "Vor să vă fure pensiile, iar neamul nostru va pieri."),
    (
        "false_dilemma",
        "You are either with the patriots or you are with the enemy, choose your side.",
    ),
    ("false_dilemma", "Ori ești cu poporul, ori ești cu dușmanii lui. Alegeți tabăra!"),
    ("whataboutism", "Corruption in our party? But what about the billions the opposition stole?"),
    ("whataboutism", "Ne criticați pe noi? Dar ce ziceți de miliardele furate de ei?"),
    (
        "insinuation",
        "Interesting that the files vanished the night before the hearing. Coincidence?",
    ),
    (
        "insinuation",
        "Interesant cum dosarele au dispărut chiar înainte de proces. Coincidență? "
        "Judecați singuri.",
    ),
    (
        "pressure",
        "Your card has been blocked after suspicious activity. "
        "Confirm your card details within 24 hours.",
    ),
    (
        "pressure",
        "Contul tău a fost suspendat. "
        "Confirmă datele cardului în 12 ore, altfel contul va fi închis.",
    ),
]

NEUTRAL = [
    # news quoting propaganda, with the speaker named
    'At the rally the crowd chanted "traitors, they sold the country", police said.',
    "Liderul grupării a declarat că imigranții ar fi „paraziți”, afirmație condamnată de ONG-uri.",
    "The minister said on Monday that critics who called migrants vermin were spreading hatred.",
    # a claim introduced as false
    "It is not true that the government will seize your savings, the central bank said.",
    "Nu este adevărat că vaccinul modifică ADN-ul, explică medicii.",
    # satire labelled as such
    "SATIRE: Local man declares his cat a deep state agent after it knocks over a vase.",
    "Pamflet. Primarul a anunțat că gropile din asfalt vor fi declarate monumente istorice.",
    # calm opinion
    "I think the new tax is badly designed, because it hits small firms harder than large ones.",
    "Cred că reforma pensiilor vine prea devreme; ar fi fost nevoie de o dezbatere mai lungă.",
    # health news from authorities
    "The health ministry said the new cancer drug reduced tumour size in most patients in trials.",
    "Ministerul Sănătății recomandă vaccinarea antigripală pentru copii și vârstnici "
    "până în decembrie.",
    # ads
    "Our bakery opens at 7. Fresh bread every morning, and coffee is half price on Fridays.",
    "Reduceri de 20% la toate bicicletele în weekend. Vă așteptăm în magazin.",
    # news reporting events that use the same words plainly
    "Rats were found in the kitchen of a restaurant, and inspectors closed it for a week.",
    "Parcel deliveries will be delayed by a day because of the storm, the postal service said.",
    "Either the council approves the budget this week or the works will start in spring.",
    "Biologists showed that the parasite behind sleeping sickness hides from the immune system.",
    # folded, "că" (that) reads like "ca" (like): no simile here
    "Studenții au aflat la laborator că parazitul găsit în apă nu este periculos.",
    "Roiuri de lăcuste au distrus culturile de porumb din sudul țării.",
    # "are" as an auxiliary, the metaphor's word used plainly a few words later
    "Reporters are covering the plague outbreak in the mountain villages.",
    "Politicienii sunt îngrijorați de virusul gripal care se răspândește.",
]


@pytest.mark.parametrize(("family", "text"), MANIPULATIVE)
def test_each_family_flags_its_technique_in_both_languages(family: str, text: str) -> None:
    """A text that leans on one family is flagged, with that family among its findings."""
    report = assess_techniques(text)
    assert family in {f.kind for f in report.findings}
    assert report.score >= FLAGGED


@pytest.mark.parametrize("text", NEUTRAL)
def test_neutral_texts_stay_low(text: str) -> None:
    """Reporting, quoting, denying, satire, calm opinion, health news and ads are not flagged."""
    assert assess_techniques(text).score < FLAGGED


@pytest.mark.parametrize(
    ("frame", "words"),
    [
        ("Oamenii ăștia sunt {}.", ("trădătorii", "trădători", "tradatorii", "TRĂDĂTORUL")),
        ("Those people are {}.", ("parasites", "parasite", "Parasites")),
        ("Oamenii ăștia sunt {}.", ("paraziții", "paraziti", "parazitul")),
    ],
)
def test_every_inflection_of_a_lemma_matches_it(frame: str, words: tuple[str, ...]) -> None:
    """Inflected forms, with or without diacritics, find the same technique as the lemma."""
    kinds = [{f.kind for f in assess_techniques(frame.format(w)).findings} for w in words]
    assert kinds[0] and all(k == kinds[0] for k in kinds)


@pytest.mark.parametrize("group", ["Refugiații", "Pesediștii", "Feminiștii"])
def test_articled_plurals_missing_from_the_dictionary_find_their_lemma(group: str) -> None:
    """A Romanian articled plural the dictionary lacks is read through its bare form, so the
    group is the one called vermin."""
    found = assess_techniques(f"{group} sunt paraziți.").findings
    assert any(f.kind == "dehumanisation" and f.text.startswith(group) for f in found)


def test_english_words_the_dictionary_keeps_whole_also_offer_their_stems() -> None:
    """ "feeding" is a noun to the dictionary; it still matches the verb "feed"."""
    found = assess_techniques("They keep feeding on us.").findings
    assert [f.text for f in found if f.kind == "dehumanisation"] == ["feeding on"]


def test_a_cue_quoted_from_a_named_speaker_counts_nothing() -> None:
    """The same words score high as a post and nothing inside a reported quote."""
    slogan = "Migrants are vermin, throw them out"
    assert assess_techniques(slogan + "!").score >= FLAGGED
    reported = assess_techniques(f'Protesters shouted "{slogan}" outside the hall.')
    assert not [f for f in reported.findings if f.kind == "dehumanisation"]


def test_a_quote_without_a_speaker_still_counts_half() -> None:
    """Scare quotes are not reporting: the lexicon's cue keeps half its weight."""
    plain = assess_techniques("The elites are parasites.", learned=False).findings
    quoted = assess_techniques("The „elites are parasites” again.", learned=False).findings
    assert max(f.weight for f in quoted) == pytest.approx(max(f.weight for f in plain) / 2)


def test_a_negated_dehumanising_cue_does_not_count() -> None:
    """ "They are not vermin" argues against the metaphor."""
    assert assess_techniques("Refugees are not vermin, they are people.").score < FLAGGED
    assert assess_techniques("Refugiații nu sunt paraziți, sunt oameni.").score < FLAGGED


def _weight(text: str, kind: str) -> float:
    return sum(f.weight for f in assess_techniques(text).findings if f.kind == kind)


def test_anonymous_sources_do_not_make_a_claim_reported_speech() -> None:
    """ "Sources say" is vague authority, not a named speaker: the cue after it still counts."""
    named = _weight("The minister said the globalists hide the truth.", "conspiracy")
    anonymous = _weight("Sources say the globalists hide the truth.", "conspiracy")
    assert anonymous > 2 * named > 0


@pytest.mark.parametrize(
    ("plain", "reported"),
    [
        ("Those refugees are parasites.", "The senator said those refugees are parasites."),
        ("Refugiații ăștia sunt paraziți.", "Deputatul a declarat că refugiații sunt paraziți."),
    ],
)
def test_reported_speech_counts_less_than_saying_it(plain: str, reported: str) -> None:
    """A cue after a named speaker's verb in its sentence is reporting: it stays under 50."""
    assert assess_techniques(plain).score >= FLAGGED
    assert 0 < _weight(reported, "dehumanisation") < _weight(plain, "dehumanisation")
    assert assess_techniques(reported).score < FLAGGED


@pytest.mark.parametrize(
    "text",
    [
        "The newspapers will never tell you this.",
        "Televiziunile nu vă vor spune niciodată asta.",
    ],
)
def test_a_cue_that_ends_with_a_speaking_verb_is_not_reported_speech(text: str) -> None:
    """ "The media will never tell you" is the claim itself, not a report of someone's words."""
    assert _weight(text, "conspiracy") == pytest.approx(0.35)


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("Dar ce ziceți de miliardele lor.", "whataboutism"),
        ("Nobody says a word about the missing files.", "insinuation"),
    ],
)
def test_a_phrase_that_holds_a_speaking_verb_is_not_reported_speech(text: str, kind: str) -> None:
    """A term or pattern is introduced only by a speaker's verb before it, not by its own."""
    assert _weight(text, kind) >= 0.25


@pytest.mark.parametrize(
    ("claim", "denied"),
    [
        ("Those refugees are parasites.", "It is not true that those refugees are parasites."),
        ("Refugiații ăștia sunt paraziți.", "Nu este adevărat că refugiații sunt paraziți."),
    ],
)
def test_a_claim_introduced_as_false_counts_nothing(claim: str, denied: str) -> None:
    """ "It is not true that …" / "nu este adevărat că …" cancels the cue that follows."""
    assert _weight(claim, "dehumanisation") > 0
    assert _weight(denied, "dehumanisation") == 0


@pytest.mark.parametrize("label", ["SATIRE:", "(satiră)", "Pamflet."])
def test_labelled_satire_counts_a_quarter(label: str) -> None:
    """The same post under a satire label keeps a quarter of its weight and stays low."""
    post = "Those refugees are parasites! Share before they delete it!"
    assert assess_techniques(post).score >= FLAGGED
    assert assess_techniques(f"{label} {post}").score < FLAGGED


def test_report_data_says_applicable_and_how_much_evidence() -> None:
    """The component data carries applicable=True and the number of findings behind the score."""
    report = assess_techniques("Those refugees are parasites. Share before they delete it!")
    data = report_data(report)
    assert data["applicable"] is True
    assert data["evidence_count"] == len(report.findings) > 0
    assert report_data(assess_techniques("Bread is sold here."))["evidence_count"] == 0


@pytest.mark.parametrize("evasion", EVASIONS)
@pytest.mark.parametrize(
    "plain",
    [
        "Those refugees are parasites. They will take your pensions!",
        "Refugiații sunt paraziți. Vor să vă fure pensiile!",
    ],
)
def test_lemma_cues_survive_unicode_evasion(plain: str, evasion: str) -> None:
    """Zero-width, bidi, fullwidth or Cyrillic rewrites find the same cues, with spans that
    slice the text as sent."""
    disguised = EVASIONS[evasion](plain)
    found, baseline = assess_techniques(disguised), assess_techniques(plain)
    assert [f.kind for f in found.findings] == [f.kind for f in baseline.findings]
    assert found.score == baseline.score >= FLAGGED
    assert all(disguised[f.start : f.end] == f.text for f in found.findings)


def _broken(edit: str) -> dict:
    spec = copy.deepcopy(load("techniques.yaml"))
    technique = spec["techniques"]["dehumanisation"]
    if edit == "unknown field":
        technique["wieght"] = 0.5
    elif edit == "weight out of range":
        technique["weight"] = 7
    elif edit == "unknown set":
        technique["cues"]["en"][0]["near"] = [["@no_such_set"]]
    return spec


@pytest.mark.parametrize(
    ("edit", "named"),
    [
        ("unknown field", "techniques.dehumanisation.wieght"),
        ("weight out of range", "techniques.dehumanisation.weight"),
        ("unknown set", "@no_such_set"),
    ],
)
def test_a_broken_data_file_fails_naming_the_field(edit: str, named: str) -> None:
    """A malformed copy of techniques.yaml raises DataFileError with the file and the field."""
    with pytest.raises(DataFileError) as raised:
        compile_lexicon(_broken(edit))
    assert "techniques.yaml" in str(raised.value)
    assert named in str(raised.value)
