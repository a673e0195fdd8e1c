"""Signs of machine-generated text: boilerplate, vocabulary, structure, a human voice."""

import copy

import pytest

from shared.errors import DataFileError
from tests.unit.analysis.evasion import EVASIONS
from workers.analysis.datafiles import load, validate
from workers.analysis.machine_text import (
    MIN_WORDS_TO_JUDGE,
    AiMarkers,
    assess_machine_text,
    report_data,
)
from workers.analysis.normalise import normalise
from workers.analysis.stylometry import mattr

ASSISTANT_EN = (
    "Artificial intelligence plays a crucial role in modern healthcare. It is important to note "
    "that these systems can analyse large amounts of data quickly. Furthermore, they can help "
    "doctors make more accurate diagnoses in many cases. Moreover, AI tools can reduce the "
    "administrative burden on medical staff every day. Additionally, they can support patients "
    "through personalised recommendations. In conclusion, artificial intelligence offers "
    "significant benefits for healthcare systems worldwide."
)
ASSISTANT_RO = (
    "Energia regenerabilă joacă un rol crucial în dezvoltarea durabilă. Este important de "
    "menționat că aceasta reduce emisiile de carbon în mod semnificativ. În plus, creează locuri "
    "de muncă în comunitățile locale din toată țara. De asemenea, contribuie la independența "
    "energetică a statelor europene. Cu toate acestea, necesită investiții importante în "
    "infrastructură. În concluzie, energia regenerabilă reprezintă o soluție esențială "
    "pentru viitor."
)
HUMAN_NEWS = (
    "The bridge closed at 6 a.m. Nobody told the bus drivers, so by seven the queue of buses "
    "stretched past the market and into Strada Lungă, where a man selling pretzels did better "
    "business than he had all month. City officials said the closure followed an inspection on "
    "Friday that found corrosion in two support cables. Repairs will take at least three weeks. "
    "Drivers were furious."
)


def test_assistant_style_english_scores_high_with_its_signals() -> None:
    """Stock phrases, even sentences and connective openers give a high probability."""
    report = assess_machine_text(ASSISTANT_EN)
    strong = {s.name for s in report.signals if s.strength >= 0.5}
    assert report.probability >= 0.8
    assert {"stock_phrases", "uniform_sentences", "connective_openers"} <= strong


def test_assistant_style_romanian_scores_high() -> None:
    """Romanian stock phrasing ("în concluzie", "este important de menționat") is recognised."""
    report = assess_machine_text(ASSISTANT_RO)
    assert report.score >= 80
    assert {"În concluzie", "Este important de menționat"} <= {f.text for f in report.phrases}


def test_human_news_with_varied_sentences_scores_low() -> None:
    """Varied sentence lengths and no stock phrasing keep the probability low."""
    assert assess_machine_text(HUMAN_NEWS).score < 25


def test_assistant_self_reference_is_strong_evidence_even_in_short_text() -> None:
    """ "As an AI language model" alone is enough; statistics are skipped on short text."""
    for text in (
        "As an AI language model, I cannot share opinions.",
        "Ca model de limbaj, nu pot.",
    ):
        report = assess_machine_text(text)
        assert report.score >= 85
        assert [s.name for s in report.signals] == ["stock_phrases"]


def test_mattr_is_lower_for_repetitive_text() -> None:
    """The moving type-token ratio falls when the same words recur."""
    varied = [f"w{i}" for i in range(100)]
    repetitive = ["a", "b", "c", "d"] * 25
    assert mattr(varied) == 1.0
    assert mattr(repetitive) < 0.2


def test_report_data_shows_every_signal() -> None:
    """The evidence lists each signal with its value, strength and weight, plus summaries."""
    data = report_data(assess_machine_text(ASSISTANT_EN))
    assert set(data["signals"]) == {
        "stock_phrases",
        "assistant_vocabulary",
        "modals",
        "connective_openers",
        "uniform_sentences",
        "enumerations",
        "generic",
        "repetition",
        "low_lexical_diversity",
        "learned_style",
        "assistant_preamble",
        "human_voice",
    }
    assert data["statistics_used"] is True
    assert data["applicable"] is True and data["evidence_count"] >= 3
    assert data["summary"] and len(data["summary"]) == len(data["summary_ro"])


@pytest.mark.parametrize("evasion", EVASIONS)
def test_disguised_assistant_text_scores_the_same(evasion: str) -> None:
    """Hidden or look-alike characters change neither the signals nor the probability."""
    disguised = EVASIONS[evasion](ASSISTANT_RO)
    report = assess_machine_text(disguised)
    assert report.probability == assess_machine_text(ASSISTANT_RO).probability
    assert all(disguised[f.start : f.end] == f.text for f in report.phrases)
    plain = [f.text for f in assess_machine_text(ASSISTANT_RO).phrases]
    assert [normalise(f.text).text for f in report.phrases] == plain


# Generated prose with none of the stock phrases: only its vocabulary and shape tell.
GENERIC_EN = (
    "Regular exercise offers numerous benefits for both physical and mental health. It "
    "strengthens the heart, improves flexibility and supports healthy weight management. "
    "Physical activity can also reduce stress and enhance mood by releasing endorphins. "
    "Establishing a consistent routine is essential for long-term success. By incorporating "
    "even small amounts of movement into daily life, individuals can significantly improve "
    "their quality of life."
)
GENERIC_RO = (
    "Exercițiile fizice regulate aduc numeroase beneficii pentru sănătatea fizică și mintală. "
    "Acestea întăresc inima, îmbunătățesc flexibilitatea și sprijină menținerea unei greutăți "
    "sănătoase. De asemenea, activitatea fizică poate reduce stresul și poate îmbunătăți "
    "starea de spirit. Stabilirea unei rutine constante este esențială pentru succesul pe "
    "termen lung. Prin integrarea mișcării în viața de zi cu zi, oricine își poate îmbunătăți "
    "semnificativ calitatea vieții."
)
INFORMAL_EN = (
    "ok so I finally tried the new ramen place on Baker street and honestly?? not worth the "
    "hype. waited 40 min, the broth was lukewarm and they forgot my egg. my friend liked hers "
    "tho. might go back for the gyoza but I'm not paying 18 quid for that bowl again lol"
)
INFORMAL_RO = (
    "am fost aseară la concertul ăla din parc și sincer a fost haos... sunetul era varză, "
    "n-am auzit nimic din primele trei piese. până la urmă ne-am mutat mai în spate și a fost "
    "ok. data viitoare iau bilet la sală, nu mai stau în ploaie pentru nimic!!"
)
NEWS_RO = (
    "Consiliul Județean Cluj a aprobat marți un buget de 14 milioane de lei pentru "
    "modernizarea drumului dintre Gilău și Huedin. Lucrările vor începe în martie și vor dura "
    "doi ani, a declarat președintele instituției, Alin Tișe. Locuitorii din Căpușu Mare spun "
    "că drumul este impracticabil de peste zece ani. O parte din bani vine din fonduri europene."
)
OPINION_EN = (
    "I have lived on this street for twenty years and I have never seen it this bad. The bins "
    "are out for days. Nobody answers the phone at the council. Last week a rat ran across my "
    "kitchen floor, and when I called, they told me to buy a trap. A trap! We pay our taxes "
    "like everyone else."
)


def _signal(text: str, name: str) -> float:
    return next(s.strength for s in assess_machine_text(text).signals if s.name == name)


# Plain generated prose: no stock phrase, few assistant words; what things "can" do.
PLAIN_EN = (
    "Volunteering is a meaningful way to give back to the community. It allows individuals to "
    "develop new skills, meet people from different backgrounds and gain a sense of purpose. "
    "Even a few hours a month can make a real difference."
)
PLAIN_RO = (
    "Voluntariatul este o modalitate valoroasă de a contribui la binele comunității. Le permite "
    "oamenilor să dezvolte abilități noi, să cunoască persoane diferite și să găsească un sens. "
    "Chiar și câteva ore pe lună pot face o diferență reală."
)


@pytest.mark.parametrize("text", [GENERIC_EN, GENERIC_RO, PLAIN_EN, PLAIN_RO])
def test_generated_prose_without_stock_phrases_scores_high(text: str) -> None:
    """Assistant vocabulary or modals, even sentences, lists of three and no specifics are
    enough."""
    report = assess_machine_text(text)
    assert not report.phrases
    assert report.score >= 50


@pytest.mark.parametrize("text", [INFORMAL_EN, INFORMAL_RO, HUMAN_NEWS, NEWS_RO, OPINION_EN])
def test_human_chat_news_and_opinion_score_low(text: str) -> None:
    """Typos, slang, first person, emotive punctuation, names and figures keep a text low."""
    assert assess_machine_text(text).score < 25


@pytest.mark.parametrize(
    ("text", "signal"),
    [
        (GENERIC_EN, "assistant_vocabulary"),
        (GENERIC_RO, "assistant_vocabulary"),
        (PLAIN_EN, "modals"),
        (PLAIN_RO, "modals"),
        (ASSISTANT_EN, "connective_openers"),
        (ASSISTANT_RO, "connective_openers"),
        (GENERIC_EN, "uniform_sentences"),
        (GENERIC_RO, "uniform_sentences"),
        (GENERIC_EN, "enumerations"),
        (GENERIC_RO, "enumerations"),
        (GENERIC_EN, "generic"),
        (GENERIC_RO, "generic"),
        (INFORMAL_EN, "human_voice"),
        (INFORMAL_RO, "human_voice"),
    ],
)
def test_each_feature_is_measured_in_both_languages(text: str, signal: str) -> None:
    """Every stylometric feature reaches at least half strength on a text that has it."""
    assert _signal(text, signal) >= 0.5


@pytest.mark.parametrize(
    ("text", "signal"),
    [
        (HUMAN_NEWS, "assistant_vocabulary"),
        (NEWS_RO, "generic"),
        (OPINION_EN, "uniform_sentences"),
        (GENERIC_EN, "human_voice"),
        (GENERIC_RO, "human_voice"),
    ],
)
def test_features_stay_quiet_where_the_text_lacks_them(text: str, signal: str) -> None:
    """News has names and figures and little assistant vocabulary; a human varies sentences;
    generated prose has no human voice."""
    assert _signal(text, signal) < 0.5


def test_the_human_voice_weighs_against_generation() -> None:
    """The same assistant prose ending in a first-person, slangy aside reads as less
    generated than ending in a neutral sentence of the same length (the learned style
    still finds the assistant's paragraph: the aside lowers the score, it does not clear
    it), and a human voice alone over plain prose keeps a text low."""
    neutral = " The local gym is closed on Sundays anyway."
    human = " honestly my gym is closed lol, I'm gutted!!"
    with_aside = assess_machine_text(GENERIC_EN + human)
    voice = next(s for s in with_aside.signals if s.name == "human_voice")
    assert voice.strength >= 0.9
    assert assess_machine_text(GENERIC_EN + neutral).score - with_aside.score >= 5
    chat = (
        "honestly the gym near me is closed on sundays lol and I'm gutted!! went there at 9, "
        "nobody around, the guard said come back monday. so I ran by the river instead, "
        "3 km in the rain, my shoes are still wet haha"
    )
    assert assess_machine_text(chat).score < 25


def test_a_short_text_is_not_judged_and_scores_low() -> None:
    """Under MIN_WORDS_TO_JUDGE words even stock phrasing is not evidence: not applicable."""
    short = "Furthermore, it is important to note that in conclusion this plays a crucial role."
    report = assess_machine_text(short)
    assert report.word_count < MIN_WORDS_TO_JUDGE
    assert report.score <= 10
    data = report_data(report)
    assert data["applicable"] is False and data["statistics_used"] is False


def test_an_assistant_naming_itself_is_judged_however_short() -> None:
    """A self-reference is evidence enough: the short text is applicable and scores high."""
    report = assess_machine_text("As an AI language model, I cannot share opinions.")
    assert report.applicable is True
    assert report.evidence_count == 1


def _broken(mutate) -> dict:
    spec = copy.deepcopy(load("ai_markers.yaml"))
    mutate(spec)
    return spec


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda s: s["text"].pop("vocabulary"), "text.vocabulary"),
        (lambda s: s["text"]["informal"].update(fr=["ouais"]), "text.informal.fr"),
        (lambda s: s["image"].update(editors="gimp"), "image.editors"),
    ],
)
def test_a_broken_markers_file_names_the_field(mutate, field: str) -> None:
    """A missing lexicon, an unknown language or a list given as a string fails with the
    file and the field in the message."""
    assert validate("ai_markers.yaml", load("ai_markers.yaml"), AiMarkers)
    with pytest.raises(DataFileError, match=rf"ai_markers\.yaml.*{field}"):
        validate("ai_markers.yaml", _broken(mutate), AiMarkers)


@pytest.mark.parametrize(
    "text",
    [
        "Dear colleagues, I am delighted to share that our team has achieved remarkable results "
        "this quarter. Your dedication, creativity and collaboration have been essential to this "
        "success. I am confident that together we will continue to reach new heights and deliver "
        "meaningful value.",
        "Dragi colegi, mă bucur să vă anunț că echipa noastră a obținut rezultate remarcabile în "
        "acest trimestru. Dedicarea, creativitatea și colaborarea voastră au fost esențiale pentru "
        "acest succes. Sunt convins că împreună vom continua să atingem noi performanțe și să "
        "aducem o valoare semnificativă.",
    ],
)
def test_an_assistant_letter_in_the_first_person_still_reads_as_generated(text: str) -> None:
    """First person weighs only a little: assistants write letters as "I" too (no stock
    phrase here: vocabulary, even sentences and lists of three carry it)."""
    report = assess_machine_text(text)
    assert not report.phrases
    assert report.score >= 50


@pytest.mark.parametrize(
    "text",
    [
        "Certainly! Here's a friendly reminder you can share with the parents of Year 4: the "
        "school trip to the science museum leaves at 8:30 on Friday, so please make sure the "
        "children bring a packed lunch, a raincoat and their signed permission slip.",
        "Great question! Choosing a neighbourhood to live in depends on your commute, your "
        "budget and the schools nearby, and it pays to visit at different times of day before "
        "you sign a lease anywhere.",
        "Desigur! Iată un mesaj pe care îl puteți trimite vecinilor din bloc despre curățenia "
        "de primăvară: sâmbătă la ora 10 ne întâlnim în fața scării, aducem saci și mănuși, "
        "iar asociația asigură măturile și containerul.",
        "Bună întrebare! Alegerea unei grădinițe depinde de distanța față de casă, de programul "
        "părinților și de mărimea grupelor, iar o vizită în timpul programului spune mai mult "
        "decât orice broșură.",
    ],
)
def test_an_assistant_reply_opening_a_text_is_a_signal(text: str, monkeypatch) -> None:
    """Assent and at once what is presented to the reader ("Certainly! Here's …", "Desigur!
    Iată …"), or praise of the question, opening a text long enough to judge: found as a
    phrase at the start, and a weighted signal that raises the probability (people open so
    too, so it is not an override)."""
    import workers.analysis.machine_text as machine_text

    report = assess_machine_text(text)
    assert report.phrases[0].kind == "assistant_preamble"
    assert report.phrases[0].start <= 2
    signal = next(s for s in report.signals if s.name == "assistant_preamble")
    assert signal.strength == 1.0
    monkeypatch.setitem(machine_text.WEIGHTS, "assistant_preamble", 0.0)
    assert assess_machine_text(text).probability < report.probability


@pytest.mark.parametrize(
    "text",
    [
        # Too short to judge: a chat reply may open this way.
        "Sure! Here's the address: Strada Lungă 5, second floor.",
        "Sigur! Iată numărul lui: 0722 000 000.",
        # Assent, then other words before "here is".
        "Sure, I'll be there at five. Here is what we still need for Saturday: crisps, "
        "lemonade, two cakes, paper plates, cups and a few candles for the table, so bring "
        "whatever you have at home.",
        "Of course, the problem here is that the council never published the figures it "
        "promised in March, and nobody on the committee has asked for them since then.",
        "Absolutely. The reason here is simple: the bus company lost two drivers in May and "
        "has not hired anyone since, so the 7:40 is cancelled most mornings this month.",
        # Praise ending in a full stop: a person answering in a thread.
        "Good question. I asked the council the same thing last week and they said the bins "
        "go back to Tuesdays from the first of the month, after the bank holiday.",
        # The formula quoted inside a text, not opening it.
        "My brother asked a chatbot for a birthday poem and it began with 'Certainly! Here "
        "is a poem for your sister', which made us all laugh at the table last night, but "
        "the poem itself was not bad at all, honestly.",
    ],
)
def test_the_same_words_elsewhere_or_in_a_short_line_are_no_preamble(text: str) -> None:
    """The opening counts only at the start of a text long enough to judge, and only when
    what is presented follows the assent at once."""
    report = assess_machine_text(text)
    assert all(f.kind != "assistant_preamble" for f in report.phrases)
    assert report.score < 50


@pytest.mark.parametrize(
    "text",
    [
        "No problem, here's the address again: 14 Mill Lane, the blue door next to the "
        "bakery, and the buzzer for flat 3 does not work so just knock loudly, I'll be in.",
        "Great question! I wondered the same when we moved here, lol. Turns out the bins "
        "go on Tuesday and the recycling every other Friday, the council site has the map.",
    ],
)
def test_a_person_opening_like_an_assistant_still_reads_human(text: str) -> None:
    """The opening is one signal among the others: a person's chatty reply that opens like
    an assistant's stays low."""
    assert assess_machine_text(text).score < 50


def test_the_learned_style_is_a_signal_that_reads_every_word(monkeypatch) -> None:
    """The learned model joins the logistic as `learned_style`: it raises generated prose
    above what the rules alone give, barely moves human reporting, and is not computed for
    a text too short to judge."""
    import workers.analysis.machine_text as machine_text

    def style(text: str) -> float:
        found = [s for s in assess_machine_text(text).signals if s.name == "learned_style"]
        return found[0].value if found else -1.0

    generated, human = style(GENERIC_EN), style(HUMAN_NEWS)
    assert generated >= 0.5 > 0.1 >= human
    # Whole words: a paragraph quoted after a speaking verb reads as it does unquoted.
    quoted = f'The minister said: "{GENERIC_EN}"'
    assert style(quoted) == style(quoted.replace('"', ""))
    assert style("Furthermore, it is important to note this.") == -1.0
    with_model = assess_machine_text(GENERIC_EN).probability
    monkeypatch.setitem(machine_text.WEIGHTS, "learned_style", 0.0)
    assert assess_machine_text(GENERIC_EN).probability < with_model


def test_the_announcement_post_s_stock_phrases_are_found_and_a_person_s_own_stays_low(
    monkeypatch,
) -> None:
    """The announcement post an assistant writes ("I'm thrilled to share … my three key
    takeaways … Onwards and upwards!") has a first person and emoji, which weigh as a human
    voice: its stock phrases count against that. A person's own news in the phrases people
    use of it ("excited to announce", "deeply grateful") stays low."""
    import workers.analysis.machine_text as machine_text

    generated = (
        "I'm thrilled to share that I've just completed the Advanced Data Analytics "
        "certificate! 🎓 It was an incredible journey of growth, learning and collaboration. "
        "Here are my three key takeaways:\n1️⃣ Curiosity fuels progress.\n2️⃣ Data tells a "
        "story.\n3️⃣ Teamwork makes the dream work.\nI'm deeply grateful to my mentors and "
        "peers for their unwavering support. Onwards and upwards! #Learning #Growth"
    )
    report = assess_machine_text(generated)
    found = {f.text.lower() for f in report.phrases}
    assert {"thrilled to share", "key takeaways", "onwards and upwards"} <= found
    assert report.signals[0].name == "stock_phrases" and report.signals[0].strength == 1.0
    monkeypatch.setitem(machine_text.WEIGHTS, "stock_phrases", 0.0)
    assert assess_machine_text(generated).probability < report.probability
    monkeypatch.undo()
    for own in (
        "I'm thrilled to share that after six years at the council I'm starting a new job at "
        "the county archive next month. I'm deeply grateful to Sue, Raj and everyone in "
        "planning for putting up with my terrible coffee. See you all at the leaving drinks "
        "on Friday!",
        "We're excited to announce that the Green Street bakery reopens on 3 May after the "
        "fire. Deeply grateful to the fire brigade, to Tom and Ana who cleaned for weeks, and "
        "to every neighbour who sent a card. First loaf is on us!",
    ):
        assert assess_machine_text(own).score < 50
