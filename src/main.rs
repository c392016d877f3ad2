//! The `mem` binary: parse the command line, run it, turn the result into an
//! exit code. Everything else lives in the library.

use std::process::ExitCode;

use clap::Parser;

use mem::cli::Cli;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match mem::cli::run(cli) {
        Ok(code) => ExitCode::from(code as u8),
        Err(err) => {
            eprintln!("mem: {}", mem::base::text::terminal_safe(&err.to_string(), false));
            ExitCode::from(err.exit_code() as u8)
        }
    }
}
