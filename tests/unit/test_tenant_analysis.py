"""What the workers do with a tenant's settings: its extra lexicon terms, its domain lists."""

from workers.analysis.domains import assess_domains, assess_domains_for
from workers.analysis.techniques import assess_techniques, with_tenant_terms

TEXT = "They call it a zorblax. Zorblax everywhere, but not zorblaxes."


def test_a_tenant_s_terms_are_found_as_whole_words_with_their_technique_s_weight():
    """Each whole-word use (any case) is a finding of the named technique, marked as the
    tenant's; a longer word containing the term is not; an unknown technique adds nothing."""
    plain = assess_techniques(TEXT)
    tuned = with_tenant_terms(TEXT, plain, {"fear_appeal": ("zorblax",), "no_such": ("they",)})
    ours = [f for f in tuned.findings if f.source == "tenant"]
    assert [(f.kind, f.text) for f in ours] == [
        ("fear_appeal", "zorblax"),
        ("fear_appeal", "Zorblax"),
    ]
    assert tuned.score > plain.score
    assert with_tenant_terms(TEXT, plain, {}) is plain


def test_a_tenant_s_blocked_hosts_and_brands_count_only_in_its_own_analysis():
    """A blocked host is high risk and a lookalike of the tenant's brand is flagged, for that
    tenant; the shipped lists alone know neither."""
    text = "Pay at https://evil-site.example/x or acmebnak.ro now"
    report, data = assess_domains_for(text, None, ("evil-site.example",), ("acmebank.ro",))
    reasons = {h["ascii"]: h["reasons"] for h in data["hosts"]}
    assert report.score == 90
    assert reasons["evil-site.example"] == ["listed as blocked-by-tenant (evil-site.example)"]
    assert any("imitates acmebank.ro" in r for r in reasons["acmebnak.ro"])
    plain = assess_domains(text)
    assert plain.score < 90
    assert all("acmebank" not in r for h in plain.hosts for r, _ in h.reasons)
