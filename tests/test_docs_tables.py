"""docs/cli.md's option table and docs/configuration.md's key table are generated from the
click command and the config schema (``python -m gradcheck.docs_tables``), and are current."""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys

import click

from gradcheck import config, docs_tables
from gradcheck.cli import main
from gradcheck.config import tomllib
from tests.conftest import ROOT


def test_generated_tables_are_current():
    assert docs_tables.stale() == [], "run: python -m gradcheck.docs_tables"


def test_check_entry_point_says_so():
    done = subprocess.run(
        [sys.executable, "-m", "gradcheck.docs_tables", "--check"], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr


def test_a_stale_table_is_found(tmp_path):
    for page in docs_tables.TABLES:
        text = (ROOT / "docs" / page).read_text(encoding="utf-8")
        (tmp_path / page).write_text(text.replace("| --- |\n| `", "| --- |\n| `--gone` | a removed option |\n| `", 1))
    assert sorted(docs_tables.stale(tmp_path)) == sorted(docs_tables.TABLES)
    docs_tables.write(tmp_path)
    assert docs_tables.stale(tmp_path) == []


def test_every_option_is_in_the_table():
    ctx = click.Context(main, info_name="gradcheck", **main.context_settings)
    table = docs_tables.options_table()
    for param in main.get_params(ctx):
        if isinstance(param, click.Option):
            assert f"| `{param.opts[0]}" in table or f", {param.opts[0]}" in table, param.opts
    assert "--check-custom-gradients" in table


def test_cli_page_shows_the_real_usage():
    ctx = click.Context(main, info_name="gradcheck", **main.context_settings)
    usage = main.get_usage(ctx).removeprefix("Usage: ")
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert f"```text\n{usage}\ngradcheck [OPTIONS] -m MODULE [-- SCRIPT_ARGS...]\n```" in text


def test_every_config_field_is_a_key():
    # what a run adds to the file's keys: where it came from, the command line, other projects
    runtime = {"path", "cli-select", "cli-ignore", "-projects"}
    fields = {f.name.replace("_", "-") for f in dataclasses.fields(config.Config)} - runtime
    assert fields == {key.name for key in config.KEYS}
    assert "check-custom-gradients" in docs_tables.config_table()


def test_configuration_example_is_valid_and_names_every_key():
    text = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    example = re.search(r"```toml\n(.*?)```", text, re.S).group(1)
    table = tomllib.loads(example)["tool"]["gradcheck"]
    config.from_table(table)  # no ConfigError
    assert set(table) == {key.name for key in config.KEYS}


def test_the_table_names_each_option_as_help_does():
    """An option's name in docs/cli.md is the one --help shows (its flags and metavar)."""
    ctx = click.Context(main, info_name="gradcheck", **main.context_settings)
    differ = []
    for param in main.get_params(ctx):
        record = param.get_help_record(ctx)
        doc_name = getattr(param, "doc_name", None)
        if record is None or not doc_name:
            continue
        shown = record[0].replace("[", "").replace("]", "").replace("|", "\\|")
        if doc_name.split(", ")[-1] != shown.split(", ")[-1]:
            differ.append((doc_name, record[0]))
    assert differ == []
