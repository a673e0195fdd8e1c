"""Claims by their form: which sentences are check-worthy, and which unverified ones are risky."""

import copy

import pytest

from shared.errors import DataFileError
from workers.analysis.claim_forms import (
    ClaimsSpec,
    checkworthiness,
    sentence_forms,
    text_registers,
)
from workers.analysis.claims import UNVERIFIABLE, extract_claims, report_data, score_claims
from workers.analysis.datafiles import load, validate
from workers.analysis.wording_model import WordingModel


def unverified_score(text: str, forms_only: bool = False) -> float:
    """The component score of `text` when the fact-check store knows none of its claims
    (with `forms_only`, what the forms make of it, the learned model reading it at 0.01)."""
    learned = WordingModel(buckets=8, bias=-4.595, weights=[0.0] * 8) if forms_only else None
    claims = extract_claims(text, learned=learned)
    return score_claims(claims, [UNVERIFIABLE] * len(claims))


@pytest.mark.parametrize(
    ("sentence", "form"),
    [
        ("Sugar causes 100% of diabetes cases.", "absolute"),
        ("Sugar causes 100% of diabetes cases.", "absolute_causal"),
        ("Zahărul provoacă toate cazurile de diabet.", "absolute_causal"),
        ("Zahărul provoacă 100% din cazurile de diabet.", "absolute"),
        ("Every vaccine contains metals.", "absolute"),
        ("Toate vaccinurile conțin metale.", "absolute"),
        ("Crime has tripled since the new mayor came in.", "percentage"),
        ("Infracționalitatea s-a triplat de la alegeri.", "percentage"),
        ("Mobile masts lead to headaches.", "causal"),
        ("Antenele duc la dureri de cap.", "causal"),
        ("Scientists finally admitted that the tests were wrong.", "admission"),
        ("Medicii recunosc că testele au fost greșite.", "admission"),
        ("They admitted it at last: the tests were wrong.", "admission"),
        ("Au recunoscut, în sfârșit: testele au fost greșite.", "admission"),
        ("A secret study shows that tap water is unsafe.", "admission"),
        ("Un studiu secret arată că apa de la robinet nu e sigură.", "admission"),
        ("Experts confirmed that the bridge is unsafe.", "authority_claim"),
        ("Experții au confirmat că podul nu e sigur.", "authority_claim"),
        ("Beetroot juice cleans your arteries.", "health"),
        ("Sucul de sfeclă curăță arterele.", "health"),
        ("This tea heals diabetes.", "cure"),
        ("Acest ceai vindecă diabetul.", "cure"),
        ("Lose weight in just five days.", "cure"),
        ("Slăbești în doar cinci zile.", "cure"),
        ("This miracle mop cleans every floor.", "absolute"),
        ("The bank will freeze all accounts.", "drastic_measure"),
        ("Statul va confisca economiile.", "drastic_measure"),
        ("Police will fine anyone who criticises the mayor online.", "drastic_measure"),
        ("Poliția va amenda pe oricine critică primarul pe internet.", "drastic_measure"),
        ("A nurse revealed that hospitals are paid per patient.", "admission"),
        ("O asistentă a dezvăluit că spitalele sunt plătite per pacient.", "admission"),
        ("Scientists have finally confirmed that the pyramids are older.", "admission"),
        ("Oamenii de știință au confirmat în sfârșit că piramidele sunt mai vechi.", "admission"),
        ("Every child in our town fell ill within a week of the jab.", "harm"),
        ("Fiecare copil din oraș s-a îmbolnăvit la o săptămână după vaccin.", "harm"),
        ("The storm was engineered to flood the farms.", "plot"),
        ("Furtuna a fost înscenată de un laborator.", "plot"),
        ("Migrants commit most crimes.", "group"),
        ("Imigranții comit cele mai multe infracțiuni.", "group"),
        ("The well water is contaminated with mercury.", "harm"),
        ("Apa din fântână este contaminată cu mercur.", "harm"),
    ],
)
def test_each_form_is_recognised_in_both_languages(sentence: str, form: str) -> None:
    """Statistics, absolutes, causes, admissions, cures, sweeping measures, plots and groups."""
    assert form in sentence_forms(sentence)


@pytest.mark.parametrize(
    "text",
    [
        "Scientists finally admitted that sugar causes 100% of diabetes cases.",
        "Oamenii de știință au recunoscut în sfârșit că zahărul provoacă 100% din diabet.",
        "This miracle herb cures diabetes in just 7 days!",
        "Această plantă minune vindecă diabetul în doar 7 zile!",
        "The floods were not natural: they were engineered to buy land cheaply. Wake up!",
        "Inundațiile nu au fost naturale, au fost provocate ca să cumpere terenuri. Treziți-vă!",
        "A message shared on WhatsApp says the state will confiscate all savings in March.",
        "Un mesaj distribuit pe WhatsApp spune că statul va confisca toate economiile în martie.",
        "Refugees commit 70% of all burglaries, a candidate said without citing any source.",
        "Refugiații comit 70% din spargeri, a spus un candidat, fără să citeze vreo sursă.",
        "The space agency finally admitted that the sun will go dark for six days in December.",
        "Agenția spațială a recunoscut în sfârșit că soarele se va stinge șase zile în decembrie.",
        "The earthquake was triggered by a secret military experiment.",
        "Cutremurul a fost declanșat de un experiment militar secret.",
        "Coconut water reverses kidney disease, a nutritionist says on Instagram.",
        "Apa de cocos vindecă bolile de rinichi, spune o nutriționistă pe Instagram.",
        "Apple cider vinegar melts belly fat overnight.",
        "Oțetul de mere topește grăsimea de pe burtă peste noapte.",
        "The council is putting fluoride in tap water to make people obedient.",
        "Primăria pune fluor în apa de la robinet ca să-i facă pe oameni ascultători.",
        "Mobile masts were installed secretly near every school in the city.",
        "Antenele au fost montate pe ascuns lângă fiecare școală din oraș.",
        "Wind turbines kill more birds than all other causes combined.",
        "Turbinele eoliene omoară mai multe păsări decât toate celelalte cauze la un loc.",
        "The virus was created in a lab as a biological weapon.",
        "Virusul a fost creat în laborator ca armă biologică.",
        "Climate change is a hoax invented to raise taxes.",
        "Schimbările climatice sunt o farsă inventată ca să ne mărească taxele.",
        "Every election since 1990 has been rigged by the same three families.",
        "Toate alegerile din 1990 încoace au fost fraudate de aceleași trei familii.",
        "Masks cause brain damage in children after only one hour of wear.",
        "Măștile provoacă leziuni cerebrale copiilor după doar o oră de purtare.",
        "BREAKING: the government will shut down the internet for a week. Share with everyone!",
        "De mâine se taie curentul în toată țara timp de 3 zile. Dați mai departe la toți!",
        "A friend who works at the hospital told me the vaccine has graphene in it.",
        "Un prieten care lucrează la spital mi-a zis că vaccinul are grafen în el.",
        "URGENT: tap water in the capital is poisoned, do not drink it until Monday!",
        "URGENT: apa de la robinet din capitală este otrăvită, nu beți până luni!",
    ],
)
def test_risky_claims_nobody_checked_score_high(text: str) -> None:
    """Admitted-by-authority, miracle-cure, plot, viral and group forms flag without a match."""
    assert unverified_score(text) >= 50


@pytest.mark.parametrize(
    "text",
    [
        "The unemployment rate fell to 5.1% in March, the national statistics institute said.",
        "Rata șomajului a scăzut la 5,1% în martie, potrivit Institutului Național de Statistică.",
        "Smoking causes about 8 million deaths a year, according to the World Health Organization.",
        "Fumatul provoacă anual aproximativ 8 milioane de decese, potrivit OMS.",
        "All schools will be closed on Monday because of the snow, the ministry announced.",
        "Toate școlile vor fi închise luni din cauza zăpezii, a anunțat ministerul.",
        "Researchers found that regular exercise may reduce the risk of heart disease by 30%.",
        "Doctors confirmed that the new vaccine causes fewer side effects, the ministry said.",
        "Medicii au confirmat că noul vaccin provoacă mai puține reacții, a anunțat ministerul.",
        "lol my cat never eats anything before 10 am, every single day, she's the worst",
        "am încercat shaormeria nouă, cea mai bună din oraș, dar 30 de lei e mult",
        "This miracle mop cleans every floor in half the time. Buy two and get one free!",
        "Our secret family recipe has been served in every branch since 1990.",
        "The report, leaked to reporters, shows unemployment rose by 2% in March.",
        "The bridge was engineered by a Swiss firm and cost 40 million euros.",
        "The river was contaminated by a chemical spill in 2019, the environment agency said.",
        "Mercury is the closest planet to the sun and has no moons.",
        "The couple secretly married in Las Vegas in 2019.",
        "Nu există nicio problemă cu apa, a spus primarul, iar analizele arată 0% nitrați.",
    ],
)
def test_sober_sourced_statistics_and_chat_stay_low(text: str) -> None:
    """Sourced, calm or hedged statistics and informal posts are check-worthy but not risky
    by their forms (the learned model reads the cat and the recipe lines as claim-like:
    docs/analysis.md, "Learned claims")."""
    assert unverified_score(text, forms_only=True) < 30


def test_what_experts_confirm_is_a_claim_but_not_a_risky_one() -> None:
    """ "Doctors confirmed that…" asserts a fact to check; alone it stays low."""
    for text in (
        "Doctors confirmed that the patient is in a stable condition.",
        "Medicii au confirmat că pacientul este stabil.",
    ):
        (claim,) = extract_claims(text)
        assert "authority_claim" in claim.cues
        assert unverified_score(text) < 30


def test_a_circumstance_is_a_cause_but_never_a_sweeping_one() -> None:
    """ "All schools closed because of the snow" is causal, not an absolute causal claim."""
    for sentence in (
        "All schools closed because of the snow.",
        "Toate școlile s-au închis din cauza zăpezii.",
    ):
        forms = sentence_forms(sentence)
        assert {"causal", "absolute"} <= set(forms)
        assert "absolute_causal" not in forms


def test_checkworthiness_adds_the_weights_of_the_forms() -> None:
    """A number (0.3) and a percentage (0.35) make 0.65; the sum stops at 1."""
    assert checkworthiness(["number", "percentage"]) == 0.65
    assert checkworthiness(["number", "percentage", "admission", "cure", "plot"]) == 1.0


def test_slogans_in_quotation_marks_are_reported_not_used() -> None:
    """A conspiracy slogan quoted by researchers does not make their sentence conspiratorial."""
    quoted = "Researchers listed slogans such as 'wake up, sheeple' and 'the elite hide it'."
    used = "Researchers are the elite who hide it, wake up."
    assert "conspiracy" not in text_registers([quoted])[0]
    assert "conspiracy" in text_registers([used])[0]


def test_a_claim_hears_the_conspiracy_of_the_sentences_around_it() -> None:
    """ "Wake up!" two sentences on frames the claim; a claim five sentences away it does not."""
    near = ["The pandemic was planned by a few men.", "The drill proves it.", "Wake up!"]
    far = [near[0], "A.", "B.", "C.", "D.", "Wake up!"]
    assert "conspiracy" in text_registers(near)[0]
    assert "conspiracy" not in text_registers(far)[0]


def test_a_source_the_sentence_discredits_sources_nothing() -> None:
    """ "According to a video" and "said, without citing any source" are not sourced."""
    (viral,) = text_registers(["Cars pollute more, according to a video."])
    (unsourced,) = text_registers(["Cars pollute more, he said, without citing any source."])
    (sourced,) = text_registers(["Cars pollute more, according to the ministry."])
    assert "sourced" not in viral and "sourced" not in unsourced
    assert "sourced" in sourced


def test_satire_asserts_nothing() -> None:
    """A text that says it is satire flags none of its claims, however wild."""
    claim = "Scientists finally admitted that Mondays cause 100% of bad moods."
    assert unverified_score(claim) >= 50
    assert unverified_score("This column is satire. " + claim) < 30


def test_the_data_say_whether_anything_was_checkable_and_what_was_not_verified() -> None:
    """`applicable` is false without a claim; risky unverified claims are listed and counted."""
    none = report_data([], [])
    assert none["applicable"] is False and none["evidence_count"] == 0
    risky = "Medicii recunosc: ceaiul vindecă cancerul!"
    text = "A study published on Monday says 40% of adults sleep badly. " + risky
    claims = extract_claims(text)
    data = report_data(claims, [UNVERIFIABLE] * len(claims))
    assert data["applicable"] is True
    assert data["evidence_count"] == 1
    assert [u["text"] for u in data["unverified"]] == [risky, text.split(" Medicii")[0]]
    assert data["unverified"][0]["risk"] >= 50 > data["unverified"][1]["risk"]


def _broken(mutate) -> dict:
    spec = copy.deepcopy(load("claims.yaml"))
    mutate(spec)
    return spec


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda s: s["forms"].pop("cures"), "forms.cures"),
        (lambda s: s["risk"].update(risky_form=0.5), "risk.risky_form"),
        (lambda s: s["checkworthiness"]["weights"].pop("plot"), "checkworthiness"),
        (lambda s: s["registers"]["urgency"].update(en="urgent"), "registers.urgency.en"),
    ],
)
def test_a_broken_claims_file_names_the_field(mutate, field: str) -> None:
    """A missing lexicon, an unknown key, a form without a weight or a wrong type fails
    with the file and the field in the message."""
    assert validate("claims.yaml", load("claims.yaml"), ClaimsSpec)
    with pytest.raises(DataFileError, match=rf"claims\.yaml.*{field}"):
        validate("claims.yaml", _broken(mutate), ClaimsSpec)


@pytest.mark.parametrize(
    ("sentence", "statistic"),
    [
        ("73% dintre tinerii români vor să plece.", True),
        ("People who work from home are 47% more productive.", True),
        ("It affects 1 in 3.", True),  # a ratio at the end of a sentence
        ("1 in 10,000 children, or 1 in 10000.", True),
        ("3 out of 5 doctors", True),
        ("1 din 4 români", True),
        ("Legea nr. 55 din 2020 a fost modificată.", False),  # a law's number and year
        ("Covid-19 in 2020 killed many people.", False),
        ("Chapter 2 in 2021 edition.", False),
        ("Pe 1 din 2 noiembrie s-a votat.", False),  # a date
        ("Reduceri de până la 30% la electrocasnice.", False),  # a discount
        ("I back the plan one hundred percent.", False),
        # in words, and multiples
        ("One in three teenagers vapes.", True),
        ("Unul din trei copii nu știe să citească.", True),
        ("Două din cinci familii nu au căldură.", True),
        ("Kids are twice as likely to fall ill.", True),
        ("Three times more cases than last year.", True),
        ("Sunt de două ori mai mulți bolnavi.", True),
        ("It happens once in two years.", False),  # a frequency, not a ratio of people
        ("Una din cele mai frumoase zile.", False),  # a superlative, not a ratio
        ("It is one in a million.", False),
    ],
)
def test_a_statistic_is_a_share_a_percent_comparison_or_a_ratio(
    sentence: str, statistic: bool
) -> None:
    from workers.analysis.claim_forms import states_statistic

    assert states_statistic(sentence) is statistic
