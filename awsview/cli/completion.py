"""`awsview completion bash|zsh|fish`: a completion script written from the parser itself, so a
new command or option completes without anyone editing a script. No dependency: the three
scripts are small, and the words they complete are baked in when they are printed."""

from __future__ import annotations

import argparse
import shlex

from awsview.cli.parser import build_parser, command_parser, commands, declared, option_strings


def words(parser: argparse.ArgumentParser) -> tuple[list[str], dict[str, list[str]]]:
    """The commands, and each command's options and fixed choices (the shared ones included)."""
    names = list(commands(parser))
    each: dict[str, list[str]] = {}
    for name in names:
        found: list[str] = []
        for action in declared(command_parser(parser, name)):
            if action.help == argparse.SUPPRESS:
                continue
            found += [o for o in action.option_strings if o.startswith("--")]
            if not action.option_strings and action.choices:
                found += [str(c) for c in action.choices]
        each[name] = found
    each[""] = [o for o in option_strings(parser) if o.startswith("--")]
    return names, each


def bash(commands: list[str], each: dict[str, list[str]]) -> str:
    cases = "\n".join(
        f"        {shlex.quote(name)}) words={shlex.quote(' '.join(found))} ;;"
        for name, found in each.items()
        if name
    )
    return f"""# awsview completion for bash: eval "$(awsview completion bash)"
_awsview() {{
    local cur=${{COMP_WORDS[COMP_CWORD]}} command="" i words
    for ((i = 1; i < COMP_CWORD; i++)); do
        case ${{COMP_WORDS[i]}} in -*) ;; *) command=${{COMP_WORDS[i]}}; break ;; esac
    done
    case $command in
{cases}
        *) words={shlex.quote(" ".join(commands + each[""]))} ;;
    esac
    COMPREPLY=($(compgen -W "$words" -- "$cur"))
}}
complete -o default -F _awsview awsview
"""


def zsh(commands: list[str], each: dict[str, list[str]]) -> str:
    return '#compdef awsview\n# awsview completion for zsh: eval "$(awsview completion zsh)"\n' + (
        "autoload -U +X bashcompinit && bashcompinit\n" + bash(commands, each).split("\n", 1)[1]
    )


def fish(commands: list[str], each: dict[str, list[str]]) -> str:
    lines = [
        "# awsview completion for fish: awsview completion fish | source",
        "complete -c awsview -f",
    ]
    listed = " ".join(commands)
    lines.append(f"complete -c awsview -n 'not __fish_seen_subcommand_from {listed}' -a '{listed}'")
    for option in each[""]:
        lines.append(
            f"complete -c awsview -n 'not __fish_seen_subcommand_from {listed}' -l {option[2:]}"
        )
    for name, found in each.items():
        if not name:
            continue
        when = f"-n '__fish_seen_subcommand_from {name}'"
        for word in found:
            if word.startswith("--"):
                lines.append(f"complete -c awsview {when} -l {word[2:]}")
            else:
                lines.append(f"complete -c awsview {when} -a {shlex.quote(word)}")
    return "\n".join(lines) + "\n"


SCRIPTS = {"bash": bash, "zsh": zsh, "fish": fish}


def script(shell: str) -> str:
    """The completion script for ``shell``."""
    commands, each = words(build_parser())
    return SCRIPTS[shell](commands, each)


def run(args: argparse.Namespace) -> int:
    print(script(args.shell), end="")
    return 0
