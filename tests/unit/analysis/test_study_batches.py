"""The leave-one-batch-out study names each dev batch by its writer's letter."""

from scripts.study_text_model import ORIGINAL, batch_of, letter_of


def test_a_lettered_batch_is_its_letter_and_the_first_batch_is_not_a_letter() -> None:
    # Set O (`*-o-*`) is a batch of its own, not the first batch (ids without a letter).
    assert letter_of("ro-o-012") == "O"
    assert letter_of("en-z-120") == "Z"
    assert letter_of("en-health-7") == ORIGINAL
    assert ORIGINAL not in {letter_of(f"ro-{c}-001") for c in "abcdefghijklmnopqrstuvwxyz"}


def test_the_study_holds_out_only_its_seven_batches() -> None:
    assert batch_of("ro-n-3") == "N"
    assert batch_of("en-g-044") == "G"
    assert batch_of("ro-o-001") == ORIGINAL  # trained on, never held out, in that study
