"""The alert rules (ops/alerts.yml): valid for Prometheus, firing on the synthetic series of
tests/unit/alerts_test.yml, using only metrics the pipeline exports, each with a runbook."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import yaml
from prometheus_client import REGISTRY

import shared.metrics  # noqa: F401 - registers every metric the processes export

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "ops" / "alerts.yml"
RULE_TESTS = Path(__file__).with_name("alerts_test.yml")
# Sample names each metric type exports besides (or instead of) its family name.
SUFFIXES = {
    "counter": ("_total",),
    "histogram": ("_bucket", "_count", "_sum"),
    "gauge": ("",),
}


def promtool(*args: str) -> subprocess.CompletedProcess[str]:
    binary = shutil.which("promtool")
    assert binary, "promtool is missing: scripts/system-packages installs it (prometheus)"
    return subprocess.run([binary, *args], capture_output=True, text=True, timeout=60)


def rules() -> list[dict]:
    groups = yaml.safe_load(RULES.read_text())["groups"]
    return [rule for group in groups for rule in group["rules"]]


def exported() -> set[str]:
    """Every sample name the pipeline's metrics can export, labelled children or not."""
    return {
        family.name + suffix
        for family in REGISTRY.collect()
        for suffix in SUFFIXES.get(family.type, ("",))
    }


def test_promtool_accepts_the_rules() -> None:
    """`promtool check rules`: the file loads in Prometheus as it is."""
    checked = promtool("check", "rules", str(RULES))
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_each_alert_fires_on_its_trouble_and_not_on_a_healthy_pipeline() -> None:
    """`promtool test rules` on synthetic series: the expected alerts, labels and summaries."""
    tested = promtool("test", "rules", str(RULE_TESTS))
    assert tested.returncode == 0, tested.stdout + tested.stderr


def test_every_metric_the_rules_use_is_exported() -> None:
    """A rule on a metric nobody exports never fires: each name is in shared/metrics.py."""
    used = {m for rule in rules() for m in re.findall(r"\bverdict_\w+", rule["expr"])}
    assert used, "no pipeline metric found in the rules"
    assert used - exported() == set()


def test_every_alert_has_a_summary_and_a_runbook_entry_in_the_readme() -> None:
    """Whoever is paged reads what is wrong and finds what to do under the alert's name."""
    readme = (ROOT / "README.md").read_text()
    runbook = readme.split("## Alerts runbook", 1)[1]
    for rule in rules():
        assert rule["annotations"]["summary"]
        assert rule["annotations"]["runbook"] == "README.md#alerts-runbook"
        assert f"**{rule['alert']}**" in runbook, rule["alert"]
    tested = yaml.safe_load(RULE_TESTS.read_text())["tests"]
    covered = {t["alertname"] for test in tested for t in test["alert_rule_test"]}
    assert covered == {rule["alert"] for rule in rules()}
