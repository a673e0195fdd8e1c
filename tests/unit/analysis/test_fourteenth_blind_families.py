"""Forms grown in the fourteenth round of issue 19, after two more sets written blind (ids
`*-bb-*`, business and workplace-technology voices; `*-cc-*`, transport, housing and
household voices; both measured as written, then tuned on). Each is checked on sentences
written for this test (none is in the evaluation set), in Romanian and English, beside texts
sharing their words that must stay as they were."""

import pytest

from tests.unit.analysis.probes import FLAGGED, claims_score, kinds
from workers.analysis import claims
from workers.analysis.domains import assess_domains, assess_host


@pytest.mark.parametrize(
    "text",
    [
        "Your 2025 tax return must be filed online and any balance paid by 31 January.",
        "Staff who were on the payroll on 5 April get their P60 by 31 May.",
        "If you paid by card, ask your bank for a chargeback.",
        "The repair is paid by your insurer to cover the damage, less the excess.",
        "Local guides are paid by the tourist board to promote walking routes in the hills.",
    ],
)
def test_a_payment_deadline_or_a_payroll_is_no_accusation(text: str) -> None:
    """ "Paid by" and "on the payroll" accuse only with whoever pays: a deadline, a card and
    a company's payroll are none."""
    assert claims_score(text) < FLAGGED


@pytest.mark.parametrize(
    "text",
    [
        "Those so-called independent experts are paid by foreign billionaires to ruin our farms.",
        "The inspectors who should stop them are all on the payroll of the builders.",
        # whoever pays, paid to say or do it
        "Those experts are paid by a drug company to say the vaccine is safe.",
    ],
)
def test_being_paid_by_someone_to_say_it_is_still_an_accusation(text: str) -> None:
    assert claims_score(text) >= FLAGGED


@pytest.mark.parametrize(
    ("passed_on", "plain"),
    [
        (
            "Fwd from a friend in the police: from Monday every speed camera on the M4 fines "
            "you for 1 mph over the limit.",
            "From Monday every speed camera on the M4 fines you for 1 mph over the limit.",
        ),
        (
            "Se zice pe grupul blocului că de la 1 noiembrie se oprește gazul în tot cartierul "
            "pentru două săptămâni.",
            "De la 1 noiembrie se oprește gazul în tot cartierul pentru două săptămâni.",
        ),
        (
            "Forwarding from my accountant's group: from tomorrow the council tows every car "
            "parked on a kerb and fines the owner £500.",
            "From tomorrow the council tows every car parked on a kerb and fines the owner £500.",
        ),
    ],
)
def test_a_claim_heard_on_a_group_or_forwarded_has_a_viral_source(
    passed_on: str, plain: str
) -> None:
    """ "Fwd from", "se zice pe grupul blocului", "forwarding from": the claim comes from a
    forward or a group chat, a source that weighs towards checking it (claims.yaml
    `viral_sources`); the same claim told plainly has none."""
    assert "viral_sources" in _registers(passed_on)
    assert "viral_sources" not in _registers(plain)


def _registers(text: str) -> set[str]:
    return {r for c in claims.extract_claims(text) for r in c.register}


@pytest.mark.parametrize(
    "text",
    [
        "Zice mama că vine și ea la masă duminică, dacă nu plouă.",
        "Am vorbit pe grupul de lucru și am stabilit ședința pentru marți la ora 10.",
        "My nan says the soup needs more salt, and she's right.",
    ],
)
def test_family_chat_with_no_claim_stays_low(text: str) -> None:
    assert claims_score(text) < FLAGGED


@pytest.mark.parametrize(
    "text",
    [
        "Insurers get everything your smart speaker hears. A friend at one of them "
        "confirmed it but can't talk about it publicly.",
        "Camerele noi trimit pozele direct la firmele de recuperări. Un prieten de acolo mi-a "
        "confirmat, dar n-are voie să vorbească public.",
    ],
)
def test_an_insider_who_may_not_speak_frames_a_hidden_truth(text: str) -> None:
    assert "conspiracy" in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "The company said it will never admit liability but agreed to pay the costs.",
        "They'll never admit it, but the kids loved the trip.",
        "Copiii nu vor recunoaște niciodată, dar le-a plăcut excursia la munte.",
        "Doctorul a zis că tata n-are voie să vorbească două zile după operație.",
        "Angajații băncii nu au voie să discute despre contul unui client cu altcineva.",
    ],
)
def test_a_refusal_or_a_rule_of_silence_is_no_conspiracy(text: str) -> None:
    assert "conspiracy" not in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "Please pass this on to every driver you know: from Monday the bridge closes for a year.",
    ],
)
def test_asking_everyone_to_pass_it_on_is_a_call_to_act(text: str) -> None:
    assert "urgency" in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "Please share your feedback on the new canteen menu using the form below.",
        "Thanks for coming! Please share the photos you took in our album.",
        # a plea for help passed on
        "Urgent: am pierdut pisica în Titan, e gri cu zgardă roșie. Spuneți la toți, vă rog!",
    ],
)
def test_asking_for_feedback_or_photos_is_no_call_to_act(text: str) -> None:
    assert "urgency" not in kinds(text)


@pytest.mark.parametrize(
    "host",
    [
        "anaf-spv-notificari.com",  # a short name and a Romanian plural of a lure word
        "anaf-notificarea.ro",  # the articled singular
        "dpd-confirmarile.com",  # the articled plural
        "bolt-rambursari.info",  # a ride-hailing app's refund
        "glovo-comanda-rambursare.com",
        "apanova-facturi.online",  # a water utility's bills
        "uber-refund.net",
    ],
)
def test_a_utility_or_ride_app_with_a_lure_word_is_a_lookalike(host: str) -> None:
    assert assess_host(host).risk >= FLAGGED


@pytest.mark.parametrize(
    "host",
    [
        "bolt.eu",
        "account.bolt.com",  # Bolt Financial carries the name by right
        "ubereats.com",
        "apanovabucuresti.ro",
        "glovoapp.com",
        "boltbikes.com",  # the short name inside an ordinary compound, no lure
        "uberlandia.gov.br",
        "notificari.net",  # a lure word's plural alone imitates no one
    ],
)
def test_the_new_brands_own_hosts_and_look_alike_words_stay_low(host: str) -> None:
    assert assess_host(host).risk < FLAGGED


def test_a_link_named_in_prose_with_its_diacritics_is_the_same_site() -> None:
    """ "Plătiți pe Ghișeul.ro" under a link to ghiseul.ro names that site in Romanian
    letters; it is not read as a second, look-alike host."""
    text = "Amenzile se pot plăti online, cu cardul, pe Ghișeul.ro."
    report = assess_domains(text, "https://www.ghiseul.ro/ghiseul/public/")
    assert report.score < FLAGGED
    assert [h.host for h in report.hosts] == ["ghiseul.ro"]


def test_a_look_alike_with_diacritics_and_no_link_to_the_real_site_is_still_read() -> None:
    """In lower case beside no link to the real site, or with a path of its own, it is a
    host to be followed; only a name written with a capital, as names are, is the site
    named (round 16: "platforme precum Ghișeul.ro" had read 80)."""
    text = "Plătiți amenda în 24 de ore pe ghișeul.ro ca să evitați executarea."
    assert assess_domains(text).score >= FLAGGED
    with_path = "Plătiți amenda în 24 de ore pe Ghișeul.ro/amenzi ca să evitați executarea."
    assert assess_domains(with_path).score >= FLAGGED
    named = "Amenzile se pot plăti pe Ghișeul.ro, fără drum la poștă."
    assert assess_domains(named).score < FLAGGED
    # a letter Romanian does not have is no Romanian spelling of the linked site
    foreign = "Intrați pe ghíșeul.ro și plătiți."
    assert assess_domains(foreign, "https://ghiseul.ro/").score >= FLAGGED
    linked = "Plătiți amenda în 24 de ore: https://ghișeul.ro/plata"
    assert assess_domains(linked, "https://www.ghiseul.ro/").score >= FLAGGED
