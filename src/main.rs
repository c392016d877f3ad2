//! The `mem` binary: parse the command line, run it, turn the result into an
//! exit code. Everything else lives in the library.

use std::process::ExitCode;

use clap::Parser;

use mem::cli::Cli;

fn main() -> ExitCode {
    // `COMPLETE=<shell> mem …`: the shell asking for completions (see `mem completions`).
    clap_complete::CompleteEnv::with_factory(<Cli as clap::CommandFactory>::command).complete();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            // Help and --version are answers, not errors.
            let usage = err.use_stderr();
            if usage && std::env::args_os().any(|a| a == "--json") {
                let text = err.render().to_string();
                let (message, hint) = usage_error(&text);
                eprint!("{text}");
                print_error(&message, Some(&hint), 2);
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

/// A usage error as clap renders it, whole: the message (the missing
/// argument, the value refused and the values there are) on one line, and
/// clap's tip, if any, with the way to the usage.
fn usage_error(text: &str) -> (String, String) {
    let body = text.split("\nUsage:").next().unwrap_or(text);
    let (mut message, mut tips) = (Vec::new(), Vec::new());
    let said = |l: &&str| !l.is_empty() && !l.starts_with("For more information");
    for line in body.lines().map(str::trim).filter(said) {
        match line.strip_prefix("tip: ") {
            Some(tip) => tips.push(tip.to_string()),
            None => message.push(line.trim_start_matches("error: ").to_string()),
        }
    }
    tips.push("run `mem help` or `mem <command> --help` for the usage".into());
    (message.join(" "), tips.join("; "))
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
