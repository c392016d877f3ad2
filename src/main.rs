//! The `mem` binary: parse the command line, run it, turn the result into an
//! exit code. Everything else lives in the library.

use std::process::ExitCode;

use clap::Parser;

use mem::cli::Cli;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let json = cli.global.json;
    match mem::cli::run(cli) {
        Ok(code) => ExitCode::from(code as u8),
        Err(err) => {
            eprintln!("mem: {}", mem::base::text::terminal_safe(&err.to_string(), false));
            if json {
                // A script reading --json gets the error as JSON too.
                let value = serde_json::json!({
                    "error": { "message": err.message, "hint": err.hint, "exit_code": err.exit_code() }
                });
                println!("{value}");
            }
            ExitCode::from(err.exit_code() as u8)
        }
    }
}
