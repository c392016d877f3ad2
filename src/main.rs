//! The `mem` binary: parse the command line, run it, turn the result into an
//! exit code. Everything else lives in the library.

use std::process::ExitCode;

use clap::Parser;

use mem::cli::Cli;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            // Help and --version are answers, not errors.
            let usage = err.use_stderr();
            if usage && std::env::args_os().any(|a| a == "--json") {
                let text = err.render().to_string();
                let first = text.lines().next().unwrap_or("").trim_start_matches("error: ");
                let hint = "run `mem help` or `mem <command> --help` for the usage";
                eprint!("{text}");
                print_error(first, Some(hint), 2);
                return ExitCode::from(2);
            }
            err.exit();
        }
    };
    let json = cli.global.json;
    match mem::cli::run(cli) {
        Ok(code) => ExitCode::from(code as u8),
        Err(err) => {
            eprintln!("mem: {}", mem::base::text::terminal_safe(&err.to_string(), false));
            if json {
                // A script reading --json gets the error as JSON too.
                print_error(&err.message, err.hint.as_deref(), err.exit_code());
            }
            ExitCode::from(err.exit_code() as u8)
        }
    }
}

/// An error as `--json` writes it on stdout (`docs/json.md`).
fn print_error(message: &str, hint: Option<&str>, exit_code: i32) {
    let value = serde_json::json!({
        "schema": format!("mem-error/{}", mem::output::JSON_VERSION),
        "error": message,
        "hint": hint,
        "exit_code": exit_code,
    });
    println!("{value}");
}
