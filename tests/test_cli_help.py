"""Every flag and argument of every `l0kit` command says what it is (`--help`), and the command line reads the benchmark
from a data folder's card."""
import argparse
from l0kit.cli.main import build_parser


def walk(parser, path=()):
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            for name, sub in a.choices.items(): yield from walk(sub, path + (name,))
        elif not isinstance(a, (argparse._HelpAction, argparse._VersionAction)):
            yield path, a


def test_every_flag_has_help():
    missing = [(' '.join(p), a.option_strings or a.dest) for p, a in walk(build_parser()) if not a.help]
    assert missing == [], f"flags without help text: {missing}"


def test_help_of_every_command_prints():
    p = build_parser()
    for a in p._actions:
        if isinstance(a, argparse._SubParsersAction):
            for name, sub in a.choices.items(): assert sub.format_help().startswith('usage: l0kit ' + name)
