"""pydantic's display after a validation error's message (logsleuth/pydantic_display.py), the one reader behind a
typeless `Value error, …` line, the engine a pydantic report shows and the validator's error in the evidence.  The
display's shape is pydantic-core's ValidationError.__str__ (`<message> [type=<kind>, input_value=…, input_type=…]`)."""

from logsleuth.pydantic_display import without_pydantic_display


def test_the_message_ends_where_the_display_begins() -> None:
    line = "Value error, max_model_len 4096 exceeds 2048 [type=value_error, input_value=ArgsKwargs((), {}), input_type=ArgsKwargs]"
    assert without_pydantic_display(line) == "Value error, max_model_len 4096 exceeds 2048"


def test_any_kind_of_item_and_a_run_of_spaces_before_it() -> None:
    assert without_pydantic_display("Assertion failed, tp must divide heads   [type=assertion_error, input_value=1]") == (
        "Assertion failed, tp must divide heads"
    )


def test_a_bracket_glued_to_a_word_is_the_message_own_text() -> None:
    message = "field x[type=int] is wrong [type=value_error, input_value=3, input_type=int]"
    assert without_pydantic_display(message) == "field x[type=int] is wrong"


def test_a_message_without_a_display_is_kept_whole() -> None:
    assert without_pydantic_display("  Engine core initialization failed.  ") == "Engine core initialization failed."
    assert without_pydantic_display("[type=value_error] at the very start") == "[type=value_error] at the very start"
