"""A broken data file stops a worker at start, with the file and the field in the message."""

import re
import shutil

import pytest
import yaml
from click.testing import CliRunner

from ops.cli import main
from shared.errors import DataFileError
from workers.analysis import claim_forms, datafiles, lemmas, techniques, wording_model
from workers.analysis.shipped_data import check_shipped_data
from workers.analysis.text import fold

ENV = {
    "AMQP_URL": "amqp://127.0.0.1:1/",
    "REDIS_URL": "redis://127.0.0.1:1/",
    "DATABASE_URL": "postgresql://127.0.0.1:1/x",
    "LOG_JSON": "false",
}


def clear_caches() -> None:
    for cached in (
        datafiles.load,
        datafiles.load_validated,
        techniques.default_lexicon,
        claim_forms.claims_spec,
        wording_model.shipped_model_file,
        wording_model.shipped_model,
        wording_model.shipped_claims_model_file,
        wording_model.shipped_claims_model,
        wording_model.shipped_machine_text_model_file,
        wording_model.shipped_machine_text_model,
    ):
        cached.cache_clear()


@pytest.fixture
def data_copy(tmp_path, monkeypatch):
    """The shipped data files, copied where a test may break one."""
    folder = tmp_path / "data"
    shutil.copytree(datafiles.DATA_DIR, folder)
    monkeypatch.setattr(datafiles, "DATA_DIR", folder)
    clear_caches()
    yield folder
    clear_caches()


def test_the_shipped_data_files_are_valid():
    """What the package ships loads and validates."""
    check_shipped_data()


def test_a_misspelt_field_stops_the_worker_before_it_connects(data_copy):
    """`verdict worker` names the file and the field and exits 1 (it never reaches a broker:
    the URLs here point nowhere)."""
    lexicon = data_copy / "techniques.yaml"
    lexicon.write_text(lexicon.read_text().replace("version: 2", "versoin: 2", 1))
    run = CliRunner().invoke(main, ["worker", "claims"], env=ENV)
    assert run.exit_code == 1
    assert "techniques.yaml" in run.output and "versoin" in run.output


@pytest.mark.parametrize(
    "name",
    [
        "claims.yaml",
        "ai_markers.yaml",
        "domains.yaml",
        "brands.yaml",
        "wording_model.json",
        "claims_model.json",
        "machine_text_model.json",
    ],
)
def test_every_other_data_file_is_checked_too(data_copy, name):
    """An unknown section in any of them is a DataFileError naming it."""
    broken = data_copy / name
    broken.write_text(broken.read_text() + "\nunexpected_section: true\n")
    with pytest.raises(DataFileError, match=re.escape(name)):
        check_shipped_data()


@pytest.mark.parametrize("path", sorted(datafiles.DATA_DIR.glob("*.yaml")), ids=lambda p: p.name)
def test_the_fast_yaml_loader_reads_each_file_as_the_pure_python_one_does(path):
    assert datafiles.SAFE_LOADER is (yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader)
    text = path.read_text(encoding="utf-8")
    assert yaml.load(text, Loader=datafiles.SAFE_LOADER) == yaml.safe_load(text)


def test_folded_inflections_map_every_dictionary_form_of_the_lemmas_asked_for():
    """The reference: every dictionary form of a lemma in the set, folded, maps to it."""
    wanted = {"vaccin", "copil", "guvern", "spune", "minciuna"}
    dictionary = lemmas._dictionaries().get_dictionary("ro")
    expected = {lemma: lemma for lemma in wanted}
    for form, lemma in dictionary.items():
        if fold(lemma) in wanted:
            expected.setdefault(fold(form), fold(lemma))
    assert lemmas.folded_inflections("ro", wanted) == expected
