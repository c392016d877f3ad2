//! `mem completions <shell>` and `mem man`: generated from the clap
//! definitions, so they never drift from the real options. Completion is
//! dynamic (clap's `COMPLETE=<shell> mem`): the shell asks `mem` itself,
//! so memory paths and categories complete as they are on disk now.

use clap_complete::Shell;
use clap_complete::env::EnvCompleter;
use serde::Serialize;

use crate::base::error::{Error, Result};
use crate::output::Style;
use crate::settings::Context;

/// Print a shell completion script.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  mem completions bash > ~/.local/share/bash-completion/completions/mem\n  echo 'source <(mem completions zsh)' >> ~/.zshrc\n  mem completions fish > ~/.config/fish/completions/mem.fish\n\nThe script asks mem for each completion, so memory paths and categories\ncomplete as they are now."
)]
pub struct Args {
    /// The shell
    #[arg(value_enum)]
    pub shell: Shell,
}

/// Print the man page (roff): mem(1), or one command's page, mem-COMMAND(1).
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  mem man > ~/.local/share/man/man1/mem.1\n  mem man recall > ~/.local/share/man/man1/mem-recall.1\n  for c in $(mem help | sed -n 's/^  \\([a-z-]*\\) .*/\\1/p'); do mem man $c > mem-$c.1; done"
)]
pub struct ManArgs {
    /// The command whose page to print (its name or alias)
    pub command: Option<String>,
}

/// Generated text.
#[derive(Debug, Serialize)]
pub struct Report {
    pub text: String,
}

/// The completion script: it registers `mem` as its own completer.
pub fn run(ctx: &Context, args: &Args, _cli: clap::Command) -> Result<Report> {
    refuse_json(ctx)?;
    let shell: &dyn EnvCompleter = match args.shell {
        Shell::Bash => &clap_complete::env::Bash,
        Shell::Elvish => &clap_complete::env::Elvish,
        Shell::Fish => &clap_complete::env::Fish,
        Shell::PowerShell => &clap_complete::env::Powershell,
        Shell::Zsh => &clap_complete::env::Zsh,
        _ => {
            return Err(Error::input("this shell has no completion script")
                .hint("use bash, zsh, fish, elvish or powershell"));
        }
    };
    let mut buf = Vec::new();
    shell
        .write_registration("COMPLETE", "mem", "mem", "mem", &mut buf)
        .map_err(|e| Error::input(format!("cannot write the completion script: {e}")))?;
    Ok(Report { text: String::from_utf8_lossy(&buf).into_owned() })
}

/// The man page.
pub fn man(ctx: &Context, args: &ManArgs, cli: clap::Command) -> Result<Report> {
    refuse_json(ctx)?;
    let page = match &args.command {
        None => cli,
        Some(name) => {
            let Some(sub) = cli.find_subcommand(name).filter(|s| !s.is_hide_set()) else {
                let names: Vec<&str> = cli
                    .get_subcommands()
                    .filter(|s| !s.is_hide_set() && s.get_name() != "help")
                    .map(clap::Command::get_name)
                    .collect();
                return Err(Error::input(format!("no command `{name}`"))
                    .hint(format!("the commands are: {}", names.join(", "))));
            };
            // Named as the main page's SEE ALSO names it: mem-recall(1).
            let name = sub.get_name().to_string();
            sub.clone().name(format!("mem-{name}")).bin_name(format!("mem {name}"))
        }
    };
    let mut buf = Vec::new();
    clap_mangen::Man::new(page)
        .render(&mut buf)
        .map_err(|e| Error::input(format!("cannot render the man page: {e}")))?;
    Ok(Report { text: String::from_utf8_lossy(&buf).into_owned() })
}

/// A shell script or a man page is not JSON: `--json` is refused, not
/// wrapped around it.
fn refuse_json(ctx: &Context) -> Result<()> {
    if ctx.json {
        return Err(Error::input("--json does not apply here: the output is a script or a page")
            .hint("drop --json"));
    }
    Ok(())
}

impl crate::output::Report for Report {
    fn human(&self, _style: &Style) -> String {
        self.text.clone()
    }
}
