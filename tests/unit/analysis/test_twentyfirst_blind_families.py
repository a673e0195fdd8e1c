"""Forms grown in the twenty-first round of issue 19, after two more sets written blind (ids
`*-nn-*`, the words that mislead a keyword reader: honest texts dense with alarm words and
manipulative texts that avoid them; `*-oo-*`, second-hand and cross-border writing:
translations, Moldovan Romanian, non-native English, forwards), measured as written on the
twentieth round's code, then NN tuned on (OO held out). Each is checked on sentences written
for this test (none is in the evaluation set), in Romanian and English, beside texts sharing
their words that must stay as they were."""

import pytest

from tests.unit.analysis.probes import FLAGGED, claims_score, kinds
from workers.analysis import claim_forms, domains, techniques
from workers.analysis.text import fold


@pytest.mark.parametrize(
    ("sentence", "denied"),
    [
        (
            'No, the school was not "closed for a secret trial", as posts on Facebook claim.',
            True,
        ),
        ("The tap water isn't 'poisoned with fluoride', as some users on TikTok said.", True),
        ("Podul nu a fost «vândut chinezilor», cum susțin mai multe postări de pe Telegram.", True),
        ("Apa nu este „otrăvită”, așa cum scriu unele pagini de Facebook.", True),
        # the officials a conspiracy post contradicts the same way are no spreaders
        ('It was NOT "a heart attack", as the media claims.', False),
        ("Nu a fost «un accident», cum susțin autoritățile.", False),
        # "some" or "many" alone names no spreader
        ("The vaccine is not 'safe', as some doctors claim.", False),
        # nothing denied, or the writer's own contrast
        ('The vaccine is "safe and effective", as posts claim.', False),
        ('The jab was not "safe", as the government claimed, but videos on TikTok show it.', False),
    ],
)
def test_a_quoted_claim_denied_and_credited_to_its_spreaders_is_a_rebuttal(
    sentence: str, denied: bool
) -> None:
    assert claim_forms.authority_rebuttal(sentence) is denied


@pytest.mark.parametrize(
    "text",
    [
        'No, the school in Leeds was not "closed for a secret vaccine trial", as posts on Facebook'
        " claim. The council says two classrooms were shut for three days after a boiler leak.",
        "Podul de la Brăila nu a fost «vândut chinezilor pentru 100 de ani», cum susțin mai multe"
        " postări de pe Telegram. Compania de drumuri explică faptul că podul rămâne în"
        " proprietatea statului și este administrat de CNAIR.",
    ],
)
def test_a_debunk_that_opens_by_denying_the_post_is_no_claim(text: str) -> None:
    assert claims_score(text) < FLAGGED


def test_a_post_denying_the_official_account_still_counts() -> None:
    text = (
        'It was NOT "a heart attack", as the media claims. Three doctors told me the minister'
        " was poisoned the day before he was due to testify."
    )
    assert claims_score(text) >= FLAGGED


def test_a_figure_lifted_out_of_context_answers_the_post_that_spread_it() -> None:
    text = (
        'A post claiming that "every pensioner will lose 40% of their pension in March" was shared'
        " 80,000 times, researchers found. The figure appears to have been lifted out of context"
        " from a 2011 consultation and describes no current plan."
    )
    assert claims_score(text) < FLAGGED


@pytest.mark.parametrize(
    "text",
    [
        "Worried about a text claiming to be from your bank? Our fraud page lists the scams we see"
        " on WhatsApp right now and what to do if you think you've been targeted.",
        "Banca vă arată mesajele false care circulă pe WhatsApp acum și ce să faceți dacă ați fost"
        " victima unei astfel de tentative.",
    ],
)
def test_a_scam_awareness_notice_is_advice_not_a_rumour(text: str) -> None:
    assert claims_score(text) < FLAGGED


@pytest.mark.parametrize(
    "text",
    [
        "does anyone know if this is true? my brother's friend said the hospital gave 30 babies"
        " the wrong vaccine last week",
        "Știe cineva dacă e adevărat? Prietena surorii mele zice că 30 de bebeluși au primit"
        " vaccinul greșit la maternitate săptămâna trecută.",
    ],
)
def test_a_rumour_asked_about_at_two_removes_is_passed_on(text: str) -> None:
    assert claims_score(text) >= FLAGGED


@pytest.mark.parametrize(
    "text",
    [
        "Strange, isn't it, that the audit vanished the week the mayor's cousin got the contract."
        " I'm not saying it was planned. I'd just like someone to explain it.",
        "I'm not a conspiracy guy. But when the story changes twice in a week, it's fair to ask"
        " who decided what we'd be told.",
        "Eu nu am nimic cu nimeni. Dar când vezi cine a primit contractul, îți vine să te întrebi"
        " cui îi convine. Nu zic mai mult.",
    ],
)
def test_a_suspicion_behind_a_disclaimer_is_insinuation(text: str) -> None:
    assert "insinuation" in kinds(text)
    assert techniques.assess_techniques(text, learned=False).score >= FLAGGED


@pytest.mark.parametrize(
    "text",
    [
        "I'm not saying the plan is perfect, but the council has published its costs in full.",
        "Nu am nimic de adăugat la comunicatul primăriei; ședința are loc joi la ora 18.",
    ],
)
def test_an_honest_disclaimer_stays_below_the_flag(text: str) -> None:
    assert techniques.assess_techniques(text, learned=False).score < FLAGGED


@pytest.mark.parametrize(
    ("text", "asking"),
    [
        ("We couldn't process your payment, so your membership is on hold: bit.ly/x1", True),
        ("Plata abonamentului a eșuat, actualizați datele aici: bit.ly/x1", True),
        ("Our members' evening moved to Friday, details: bit.ly/x1", False),
    ],
)
def test_a_subscription_held_for_payment_behind_a_shortener_is_a_request(
    text: str, asking: bool
) -> None:
    spec = domains.default_reputation()
    assert domains.shortener_request(text, spec.request_words, spec.giving_words) is asking


def test_a_shortened_payment_lure_for_a_subscription_is_a_risky_host() -> None:
    text = (
        "Hi, this is a reminder from your streaming service. We weren't able to process your"
        " latest payment, so your membership is on hold. Update it here: https://bit.ly/st-upd8"
    )
    assert domains.assess_domains(text).score >= FLAGGED


def test_the_folded_forms_are_what_the_rebuttal_reads() -> None:
    assert claim_forms.authority_rebuttal(fold("Nu e «adevărat», cum zic unii pe Facebook."))


@pytest.mark.parametrize(
    ("text", "deadline"),
    [
        ("RED WARNING: very strong winds from 6pm today until 6am tomorrow.", False),
        ("The bridge is closed between Monday and Friday until midnight.", False),
        ("The council had not responded by the time of publication tonight.", False),
        ("Circulația este închisă începând de astăzi până vineri.", False),
        ("Primăria nu a răspuns solicitării noastre până la ora publicării.", False),
        # a deadline pressed on the reader stays one
        ("Pay before Friday or lose your account!", True),
        ("Send it by tonight, the offer ends!", True),
        ("Plătiți până vineri sau pierdeți contul!", True),
        ("Aveți timp de trei zile până vineri să plătiți, altfel pierdeți totul!", True),
        # a lure's "respond by" is a deadline; only a source that "had not responded" is press
        ("Respond by tonight or lose your place!", True),
        ("Dacă nu răspundeți până vineri, contul va fi blocat.", True),
    ],
)
def test_the_end_of_a_window_or_press_time_is_no_deadline(text: str, deadline: bool) -> None:
    assert ("urgency" in kinds(text)) is deadline
