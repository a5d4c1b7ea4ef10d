//! `git clada completions SHELL`: the shell completion script, generated
//! from the argument definitions (clap_complete), so that it never falls
//! behind them.
//!
//! Completions are written for the program `git-clada`. zsh's and fish's
//! own git completions hand `git clada …` to a `git-clada` completion by
//! themselves; git's bash completion instead calls a function named
//! `_git_clada` when one exists, so the bash script adds that function,
//! which turns git's view of the line (`git clada ap`) into the program's
//! (`git-clada ap`) and calls the generated completion.

use clap::CommandFactory as _;
use clap_complete::Shell;

use super::{Cli, CliError, Outcome, write_stdout};

/// Print a shell completion script
///
/// Completes subcommands, options and their values, for `git clada …` and
/// `git-clada …`. Install it where your shell loads completions, e.g.
/// bash: `git clada completions bash >
/// ~/.local/share/bash-completion/completions/git-clada` (or source it
/// from ~/.bashrc after git's own completion); zsh: `git clada completions
/// zsh > ~/.zfunc/_git-clada` with ~/.zfunc on $fpath; fish: `git clada
/// completions fish > ~/.config/fish/completions/git-clada.fish`.
#[derive(Debug, clap::Args)]
pub struct CompletionsArgs {
    /// The shell to complete for
    #[arg(value_enum)]
    pub shell: CompletionShell,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CompletionShell {
    Bash,
    Zsh,
    Fish,
}

/// The program name completions are written for (`git clada` runs it).
const PROGRAM: &str = "git-clada";

/// git's bash completion calls `_git_clada` for `git clada …`, with the
/// line in `words`/`cword` (git's own variables). The generated function
/// reads `COMP_WORDS`/`COMP_CWORD` and wants the program's name first;
/// git's completion is `-o nospace`, so whole words get their space here.
const GIT_BASH_BRIDGE: &str = r#"
# git's completion (`git clada <TAB>`) calls _git_clada when it exists.
_git_clada() {
    # `clada` is words[__git_cmd_idx]: after git's own options
    # (`git -C dir clada …`); older git's completion has no index.
    local start=$(( ${__git_cmd_idx:-1} + 1 ))
    local COMP_WORDS=(git-clada "${words[@]:start}")
    local COMP_CWORD=$((cword - start + 1))
    local COMP_LINE="${COMP_WORDS[*]}"
    local COMP_POINT=${#COMP_LINE}
    local cur_word="${COMP_WORDS[COMP_CWORD]}"
    local prev_word=""
    if ((COMP_CWORD > 0)); then prev_word="${COMP_WORDS[COMP_CWORD-1]}"; fi
    COMPREPLY=()
    @FUNCTION@ git-clada "$cur_word" "$prev_word"
    local i
    for i in "${!COMPREPLY[@]}"; do
        case "${COMPREPLY[i]}" in
            */|*=) ;;
            *) COMPREPLY[i]="${COMPREPLY[i]} " ;;
        esac
    done
}
"#;

pub fn run_completions(args: CompletionsArgs) -> Result<Outcome, CliError> {
    let mut script = Vec::new();
    let shell = match args.shell {
        CompletionShell::Bash => Shell::Bash,
        CompletionShell::Zsh => Shell::Zsh,
        CompletionShell::Fish => Shell::Fish,
    };
    clap_complete::generate(shell, &mut Cli::command(), PROGRAM, &mut script);
    if args.shell == CompletionShell::Bash {
        // clap_complete names the subcommands' cases from the program name
        // with its `-` turned into `__subcmd__` (`git__subcmd__clada…`)
        // but sets `cmd` with it turned into `__` (`git__clada…`): without
        // this, no subcommand's options would ever be completed (clap
        // issue 6421; once fixed there, this replaces nothing).
        let fixed = String::from_utf8_lossy(&script).replace("git__subcmd__clada", "git__clada");
        script = fixed.into_bytes();
        // The generated function's name, as its `complete -F NAME` says.
        let function = String::from_utf8_lossy(&script)
            .lines()
            .find_map(|l| l.trim().strip_prefix("complete -F "))
            .and_then(|rest| rest.split_whitespace().next())
            .map(str::to_owned)
            .ok_or_else(|| {
                CliError::new("the generated bash completion has no `complete -F` line")
            })?;
        script.extend_from_slice(GIT_BASH_BRIDGE.replace("@FUNCTION@", &function).as_bytes());
    }
    write_stdout(|out| out.write_all(&script))?;
    Ok(Outcome::Success)
}
