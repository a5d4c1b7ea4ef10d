//! The `git-clada` binary: all logic is in the library.

fn main() -> std::process::ExitCode {
    clada::cli::main()
}
